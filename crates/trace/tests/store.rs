//! Naming, finding and listing traces.

mod common;

use common::*;
use hindsight_trace::*;

fn make_trace(dir: &std::path::Path, exe: &std::path::Path, start_time: u64) {
    let mut h = header();
    h.start_time = start_time;
    let w = TraceWriter::create(dir, h, exe).unwrap();
    w.abandon("").unwrap();
}

#[test]
fn new_trace_path_numbers_from_zero() {
    let s = Scratch::new("numbering");
    let root = s.path().join("a").join("root");
    let p0 = new_trace_path(&root, "prog").unwrap();
    assert!(root.is_dir(), "the root is created");
    assert_eq!(p0, root.join("prog-0"));
    assert!(!p0.exists(), "the trace itself is not created");
    std::fs::create_dir(&p0).unwrap();
    assert_eq!(new_trace_path(&root, "prog").unwrap(), root.join("prog-1"));
    std::fs::create_dir(root.join("prog-2")).unwrap();
    assert_eq!(new_trace_path(&root, "prog").unwrap(), root.join("prog-1"));
    std::fs::create_dir(root.join("prog-1")).unwrap();
    assert_eq!(new_trace_path(&root, "prog").unwrap(), root.join("prog-3"));
    // Another program starts at 0; a file takes a name too.
    assert_eq!(
        new_trace_path(&root, "other").unwrap(),
        root.join("other-0")
    );
    std::fs::write(root.join("other-0"), b"").unwrap();
    assert_eq!(
        new_trace_path(&root, "other").unwrap(),
        root.join("other-1")
    );
    // Odd names stay inside the root.
    assert_eq!(new_trace_path(&root, "a/b").unwrap(), root.join("a_b-0"));
    assert_eq!(new_trace_path(&root, "").unwrap(), root.join("trace-0"));
    assert_eq!(new_trace_path(&root, "..").unwrap(), root.join("trace-0"));
}

#[test]
fn latest_symlink_and_resolve() {
    let s = Scratch::new("latest");
    let root = s.path().join("root");
    let exe = fake_exe(&s);
    let msg = resolve(&root, None).err().unwrap().to_string();
    assert_eq!(
        msg,
        format!(
            "no traces in {}; record one with 'hindsight record PROG'",
            root.display()
        )
    );
    let t0 = new_trace_path(&root, "prog").unwrap();
    make_trace(&t0, &exe, 10);
    set_latest(&root, &t0).unwrap();
    let link = root.join("latest-trace");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        std::path::Path::new("prog-0")
    );
    assert_eq!(
        resolve(&root, None).unwrap(),
        std::fs::canonicalize(&t0).unwrap()
    );
    let t1 = new_trace_path(&root, "prog").unwrap();
    make_trace(&t1, &exe, 20);
    set_latest(&root, &t1).unwrap();
    assert_eq!(
        resolve(&root, None).unwrap(),
        std::fs::canonicalize(&t1).unwrap()
    );
    // A trace elsewhere is linked by its full path.
    let away = s.path().join("elsewhere");
    make_trace(&away, &exe, 30);
    set_latest(&root, &away).unwrap();
    assert_eq!(std::fs::read_link(&link).unwrap(), away);
    // No temporary links are left behind.
    let names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");

    // Names and paths.
    assert_eq!(resolve(&root, Some("prog-0")).unwrap(), root.join("prog-0"));
    let full = t1.to_string_lossy().into_owned();
    assert_eq!(resolve(&root, Some(&full)).unwrap(), t1);
    let msg = resolve(&root, Some("nope-3")).err().unwrap().to_string();
    assert_eq!(
        msg,
        format!("no trace named nope-3 (in {})", root.display())
    );
    assert!(resolve(&root, Some("")).is_err());

    // A dangling link means no traces.
    std::fs::remove_dir_all(&away).unwrap();
    assert!(resolve(&root, None)
        .err()
        .unwrap()
        .to_string()
        .starts_with("no traces in"));
}

#[test]
fn list_finds_traces_oldest_first() {
    let s = Scratch::new("list");
    let root = s.path().join("root");
    assert_eq!(list(&root).unwrap(), Vec::<std::path::PathBuf>::new());
    let exe = fake_exe(&s);
    std::fs::create_dir_all(&root).unwrap();
    make_trace(&root.join("b-0"), &exe, 300);
    make_trace(&root.join("a-0"), &exe, 100);
    make_trace(&root.join("c-0"), &exe, 200);
    // Not traces: a plain directory, a file, and the latest link.
    std::fs::create_dir(root.join("junk")).unwrap();
    std::fs::write(root.join("file"), b"").unwrap();
    set_latest(&root, &root.join("b-0")).unwrap();
    assert_eq!(
        list(&root).unwrap(),
        vec![root.join("a-0"), root.join("c-0"), root.join("b-0")]
    );
}
