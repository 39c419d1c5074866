//! Pages of one template give the same kind of text: whether the main text
//! or the full text is taken must not hang on the length of a name (issue
//! 45, item 9: rustdoc's intrinsics under `arm` and `aarch64`).

use nearcrawl_extract::{Input, extract};

/// A rustdoc intrinsic's page (the Rust docs' template, cut down) for one
/// architecture folder.
fn intrinsic(arch: &str) -> String {
    format!(
        r##"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>vabd_s16 in core::arch::{arch} - Rust</title></head><body class="rustdoc fn">
<nav class="sidebar"><a class="sidebar-logo" href="../../index.html">core</a>
<div class="sidebar-elems"><h2 class="location"><a href="#">vabd_s16</a></h2>
<div><h3>In <a href="../../index.html">core</a>::<a href="../index.html">arch</a>::<a href="index.html">{arch}</a></h3></div></div></nav>
<main><div class="width-limiter"><section id="main-content" class="content">
<div class="main-heading"><h1 class="fqn"><span class="in-band">Function <a href="../../index.html">core</a>::<wbr><a href="../index.html">arch</a>::<wbr><a href="index.html">{arch}</a>::<wbr><a class="fn" href="#">vabd_s16</a></span></h1>
<span class="out-of-band"><a class="srclink" href="../../../src/x.rs.html">source</a> · <a id="toggle-all-docs" href="javascript:void(0)">[<span class="inner">&#x2212;</span>]</a></span></div>
<div class="docblock item-decl"><pre class="rust fn"><code>pub unsafe fn vabd_s16(a: <a class="struct" href="struct.int16x4_t.html">int16x4_t</a>, b: <a class="struct" href="struct.int16x4_t.html">int16x4_t</a>) -&gt; <a class="struct" href="struct.int16x4_t.html">int16x4_t</a></code></pre></div>
<span class="item-info"><div class="stab unstable">This is a nightly-only experimental API. (<code>stdsimd</code> <a href="https://github.com/rust-lang/rust/issues/48556">#48556</a>)</div>
<div class="stab portability">Available on <strong>{arch} and target feature <code>neon</code></strong> only.</div></span>
<details class="rustdoc-toggle top-doc" open><summary class="hideme"><span>Expand description</span></summary>
<div class="docblock"><p>Absolute difference between the arguments</p></div></details></section></div></main></body></html>"##
    )
}

#[test]
fn twins_of_one_template_give_the_same_text_whatever_their_names_length() {
    let texts: Vec<String> = ["avr", "arm", "mips", "x86_64", "aarch64", "powerpc64"]
        .iter()
        .map(|arch| {
            let page = extract(intrinsic(arch).as_bytes(), &Input::default());
            page.text.replace(arch, "ARCH")
        })
        .collect();
    assert!(texts[0].contains("Absolute difference"), "{}", texts[0]);
    for t in &texts[1..] {
        assert_eq!(t, &texts[0]);
    }
}
