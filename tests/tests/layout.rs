//! The workspace's shape: no import circle between the modules of a crate,
//! and the embedded store is a leaf of the crawl crate.
//!
//! A module's imports are the `crate::NAME` paths in its code (comments and
//! `#[cfg(test)]` items left out, the code around them kept); NAME is a
//! module when the crate has a file or folder of that name. A circle means
//! two files that can only be read together: the rule the issue tracker
//! asked for ("no import circle anywhere"), kept by a test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name -> the modules of the same crate it imports.
type Imports = BTreeMap<String, BTreeSet<String>>;

fn module_name(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let first = rel.components().next().unwrap().as_os_str();
    first.to_string_lossy().into_owned()
}

/// The code of a file without comments and without the items marked
/// `#[cfg(test)]` (a test module, a test-only function or import): what
/// is around and after them is kept.
fn code(text: &str) -> String {
    let text = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        rest = &rest[item_len(rest)..];
    }
    kept.push_str(rest);
    kept
}

/// The length of the item at the start of `code`: up to its `;` or to the
/// `}` that closes its first `{` (braces in string and char literals do
/// not count).
fn item_len(code: &str) -> usize {
    let mut depth = 0;
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ';' if depth == 0 => return i + 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            '"' => {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' if code[i..].starts_with("'{'") || code[i..].starts_with("'}'") => {
                chars.next();
                chars.next();
            }
            _ => {}
        }
    }
    code.len()
}

/// The names `crate::NAME` and `crate::{A, B::...}` mention.
fn mentioned(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|p| ident(p.trim())));
        } else {
            names.insert(ident(rest));
        }
    }
    names
}

fn imports(src: &Path) -> Imports {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut imports = Imports::new();
    for f in &files {
        let name = module_name(src, f);
        let code = code(&std::fs::read_to_string(f).unwrap());
        imports.entry(name).or_default().extend(mentioned(&code));
    }
    let modules: BTreeSet<String> = imports.keys().cloned().collect();
    for (name, uses) in imports.iter_mut() {
        uses.retain(|u| u != name && modules.contains(u));
    }
    imports
}

/// A circle through `from`, if there is one: the path back to it.
fn circle_from(imports: &Imports, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut visited = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in imports.get(&at).into_iter().flatten() {
            if next == from {
                return Some([path.clone(), vec![from.to_string()]].concat());
            }
            if visited.insert(next.clone()) {
                stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut circles = Vec::new();
    let mut crates_read = 0;
    for e in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = e.path().join("src");
        if !src.is_dir() {
            continue;
        }
        crates_read += 1;
        let imports = imports(&src);
        for name in imports.keys() {
            if let Some(c) = circle_from(&imports, name) {
                circles.push(format!(
                    "{}: {}",
                    e.file_name().to_string_lossy(),
                    c.join(" -> ")
                ));
            }
        }
    }
    assert!(crates_read >= 8, "read {crates_read} crates");
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// The embedded store (`crates/crawl/src/embedded`) uses the shared code;
/// nothing shared uses it, so a cluster worker carries none of it.
#[test]
fn nothing_shared_imports_the_embedded_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/crawl/src");
    let imports = imports(&src);
    assert!(imports.contains_key("embedded"), "{:?}", imports.keys());
    let importers: Vec<&String> = imports
        .iter()
        .filter(|(name, uses)| *name != "lib" && *name != "embedded" && uses.contains("embedded"))
        .map(|(name, _)| name)
        .collect();
    assert!(
        importers.is_empty(),
        "shared modules import the embedded store: {importers:?}"
    );
}

#[test]
fn a_circle_is_found() {
    let mut imports = Imports::new();
    for (a, b) in [
        ("outbox", "append_file"),
        ("append_file", "outbox"),
        ("state", "outbox"),
    ] {
        imports.entry(a.into()).or_default().insert(b.into());
    }
    assert!(circle_from(&imports, "outbox").is_some());
    assert!(circle_from(&imports, "state").is_none());
    let text = "use crate::{a::B, c};\nuse crate::d::E;\n// crate::f\n";
    let names: Vec<String> = mentioned(&code(text)).into_iter().collect();
    assert_eq!(names, ["a", "c", "d"]);
}

#[test]
fn imports_after_a_test_item_are_seen() {
    let text = "use crate::a;\n#[cfg(test)]\nuse crate::b;\n\
                #[cfg(test)]\nfn only_in_tests() { let s = \"}\"; if x { crate::c::f(); } }\n\
                fn g() { crate::d::h(); }\n\
                #[cfg(test)]\nmod tests {\n    use crate::e;\n}\n";
    let names: Vec<String> = mentioned(&code(text)).into_iter().collect();
    assert_eq!(names, ["a", "d"]);
}
