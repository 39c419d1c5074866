//! `nearcrawl dedup`, end to end, on real article text.

use nearcrawl_tests::{article_bodies, run};
use serde_json::{Value, json};

fn articles() -> Vec<String> {
    let mut out = article_bodies(250, false);
    out.truncate(40);
    out
}

/// Every 25th word replaced: a 4% edit.
fn edited(text: &str) -> String {
    text.split_whitespace()
        .enumerate()
        .map(|(i, w)| if i % 25 == 12 { "replaced" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn jsonl(docs: &[(Value, String)]) -> String {
    docs.iter()
        .map(|(id, text)| json!({"id": id, "text": text}).to_string() + "\n")
        .collect()
}

fn output(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL output"))
        .collect()
}

#[test]
fn finds_exact_and_near_duplicates_and_skips_bad_lines() {
    let arts = articles();
    let mut docs: Vec<(Value, String)> = arts
        .iter()
        .enumerate()
        .map(|(i, t)| (json!(format!("a{i}")), t.clone()))
        .collect();
    for (i, t) in arts.iter().enumerate().take(10) {
        docs.push((json!(format!("near{i}")), edited(t)));
        docs.push((json!(100 + i), t.to_uppercase()));
    }
    let mut input = jsonl(&docs);
    input.insert_str(0, "{broken json\n");
    input.push_str("[1, 2]\n{\"id\": 7}\n{\"id\": 8, \"text\": 9}\n\n");
    let out = run(&["dedup"], input.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = output(&out);
    // A 4% edit moves a few fingerprints past k = 8 bits (one 522-word
    // article, 10): found all the same, the sketch agreeing more as the
    // fingerprints differ; every copy found is of its original.
    let near_found = rows.iter().filter(|r| r["kind"] == "near").count();
    assert_eq!(near_found, 10, "{rows:#?}");
    assert_eq!(rows.len(), 10 + near_found, "{rows:#?}");
    for i in 0..10 {
        if let Some(near) = rows.iter().find(|r| r["id"] == json!(format!("near{i}"))) {
            assert_eq!(near["duplicate_of"], json!(format!("a{i}")));
            assert_eq!(
                (near["kind"].as_str(), near["check"].as_str()),
                (Some("near"), Some("sketch"))
            );
            // 0.5 when the fingerprints agree, 0.8 at 16 bits.
            let far = (near["distance"].as_f64().unwrap() / 16.0).min(1.0);
            assert!(near["similarity"].as_f64().unwrap() >= 0.5 + 0.3 * far - 1e-3);
        }
        let exact = rows
            .iter()
            .find(|r| r["id"] == json!(100 + i))
            .expect("exact copy found");
        assert_eq!(exact["duplicate_of"], json!(format!("a{i}")));
        assert_eq!(
            (exact["kind"].as_str(), exact["distance"].as_u64()),
            (Some("exact"), Some(0))
        );
    }
    // Field order as documented.
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        first.starts_with(r#"{"id":"#) && first.contains(r#","duplicate_of":"#),
        "{first}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [1, 62, 63, 64] {
        assert!(
            err.contains(&format!("line {line}:")),
            "line {line} not reported: {err}"
        );
    }
    assert!(
        err.contains(&format!(
            "60 documents, 10 exact, {near_found} near, 0 short, 4 malformed lines"
        )),
        "{err}"
    );
}

#[test]
fn a_persistent_index_carries_over_between_runs() {
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-dedup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let index = dir.to_str().unwrap();
    let arts = articles();
    let first: Vec<(Value, String)> = arts
        .iter()
        .enumerate()
        .map(|(i, t)| (json!(i), t.clone()))
        .collect();
    let out = run(&["dedup", "--index", index], jsonl(&first).as_bytes());
    assert!(out.status.success());
    assert!(
        output(&out).is_empty(),
        "distinct articles are not duplicates"
    );

    let second: Vec<(Value, String)> = arts
        .iter()
        .enumerate()
        .take(5)
        .map(|(i, t)| (json!(format!("again{i}")), edited(t)))
        .collect();
    let out = run(
        &["dedup", "--index", index, "--id-field", "id"],
        jsonl(&second).as_bytes(),
    );
    assert!(out.status.success());
    let rows = output(&out);
    // As above: all five edited copies, one of them 10 bits away.
    assert_eq!(rows.len(), 5, "{rows:#?}");
    for r in &rows {
        let i: usize = r["id"].as_str().unwrap()["again".len()..].parse().unwrap();
        assert_eq!(r["duplicate_of"], json!(i), "{r}");
    }
    // k bounds only the verification, so a later run may change it: at
    // k = 64 every copy within the sketch threshold is found again.
    let out = run(
        &["dedup", "--index", index, "--id-field", "id", "-k", "64"],
        jsonl(&second).as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(output(&out).len() >= rows.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn custom_fields_and_a_missing_input_file() {
    let docs = "{\"url\": \"u1\", \"body\": \"one two three\"}\n{\"url\": \"u2\", \"body\": \"ONE two three!\"}\n";
    let out = run(
        &["dedup", "--id-field", "url", "--text-field", "body"],
        docs.as_bytes(),
    );
    assert!(out.status.success());
    let rows = output(&out);
    assert_eq!(
        rows,
        vec![
            json!({"id": "u2", "duplicate_of": "u1", "distance": 0, "kind": "exact", "similarity": 1.0, "check": "exact-text"})
        ]
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 short"));
    // Titles name what a document is about: the same text under another
    // title is kept.
    let docs = "{\"id\": 1, \"text\": \"one two three\", \"title\": \"int8\"}\n\
                {\"id\": 2, \"text\": \"one two three\", \"title\": \"int16\"}\n\
                {\"id\": 3, \"text\": \"one two three\", \"title\": \"int8\"}\n";
    let rows = output(&run(&["dedup"], docs.as_bytes()));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0]["id"], &rows[0]["duplicate_of"]),
        (&json!(3), &json!(1))
    );
    let out = run(&["dedup", "--input", "/nonexistent/docs.jsonl"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/docs.jsonl"));
}
