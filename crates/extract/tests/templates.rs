//! Pages of one template give the same kind of text: two rustdoc pages of
//! the same item for two targets (one with an extra "experimental" notice)
//! both open with the item's heading, whichever of their blocks scored
//! best.

use nearcrawl_extract::{Input, extract};

fn text_of(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/rustdoc");
    let html = std::fs::read(dir.join(name)).unwrap();
    extract(&html, &Input::default()).text
}

#[test]
fn twin_pages_of_one_template_open_alike() {
    for (name, arch) in [
        ("arm-fn.vld1_u16.html", "arm"),
        ("aarch64-fn.vld1_u16.html", "aarch64"),
    ] {
        let text = text_of(name);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(format!("Function core::arch::{arch}::vld1_u16").as_str()),
            "{name}: {text}"
        );
        assert!(
            text.contains("pub unsafe fn vld1_u16(ptr: *const u16) -> uint16x4_t"),
            "{name}: {text}"
        );
        assert!(
            text.contains("Load multiple single-element structures"),
            "{name}"
        );
    }
}
