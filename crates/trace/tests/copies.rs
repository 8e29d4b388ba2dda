//! Copies of mapped files shared between traces through the store, and kept sparse.

mod common;

use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use common::*;
use hindsight_trace::*;

fn done() -> Summary {
    Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 1,
        events: 0,
        threads: 1,
        processes: 1,
    }
}

/// A trace of `exe` with `libs` mapped, sharing its copies through `store`; returns its
/// directory.
fn trace_with(s: &Scratch, name: &str, exe: &Path, libs: &[&Path], store: &Path) -> PathBuf {
    let dir = s.path().join(name);
    let mut w = TraceWriter::create_sharing(&dir, header(), exe, Some(store)).unwrap();
    for l in libs {
        w.add_file(l).unwrap();
    }
    w.finish(&done()).unwrap();
    dir
}

fn copy_of(dir: &Path, base: &str) -> PathBuf {
    std::fs::read_dir(dir.join("files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().ends_with(base))
        .unwrap_or_else(|| panic!("no copy of {base} in {}", dir.display()))
}

fn lib(s: &Scratch, name: &str, fill: u8, len: usize) -> PathBuf {
    let p = s.path().join(name);
    let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(fill)).collect();
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn a_second_trace_of_the_same_files_links_the_first_ones_copies() {
    let s = Scratch::new("share");
    let store = s.path().join("traces").join(copies::STORE);
    let exe = fake_exe(&s);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let a = lib(&s, "liba.so", 3, 3 << 20);
    let b = lib(&s, "libb.so", 5, 100_000);
    let t1 = trace_with(&s, "t1", &exe, &[&a, &b], &store);
    let r1 = TraceReader::open(&t1).unwrap();
    assert_eq!(r1.sizes().shared, 0, "nothing else uses them yet");
    let t2 = trace_with(&s, "t2", &exe, &[&a, &b], &store);
    for base in ["prog", "liba.so", "libb.so"] {
        let (c1, c2) = (copy_of(&t1, base), copy_of(&t2, base));
        let (m1, m2) = (c1.metadata().unwrap(), c2.metadata().unwrap());
        // One file on disk: the store's, linked by both traces.
        assert_eq!((m1.dev(), m1.ino()), (m2.dev(), m2.ino()), "{base}");
        assert_eq!(m2.nlink(), 3, "{base}");
    }
    let r2 = TraceReader::open(&t2).unwrap();
    r2.check().unwrap();
    let sizes = r2.sizes();
    assert_eq!(sizes.copies, (3 << 20) + 100_000 + 15);
    assert_eq!(sizes.shared, sizes.copies);
    // The program is executable in the trace, as replay may need to run it.
    assert_ne!(copy_of(&t2, "prog").metadata().unwrap().mode() & 0o100, 0);
    // A library with other contents gets its own copy.
    std::fs::write(&b, b"changed").unwrap();
    let t3 = trace_with(&s, "t3", &exe, &[&a, &b], &store);
    assert_ne!(
        copy_of(&t3, "libb.so").metadata().unwrap().ino(),
        copy_of(&t1, "libb.so").metadata().unwrap().ino()
    );
    assert_eq!(std::fs::read(copy_of(&t3, "libb.so")).unwrap(), b"changed");
    TraceReader::open(&t3).unwrap().check().unwrap();
}

#[test]
fn a_damaged_store_entry_is_never_linked_again_and_unused_entries_go() {
    let s = Scratch::new("damaged");
    let store = s.path().join(copies::STORE);
    let exe = fake_exe(&s);
    let a = lib(&s, "liba.so", 7, 200_000);
    let t1 = trace_with(&s, "t1", &exe, &[&a], &store);
    // Damaged in place (as a disk error would): every trace that links it sees it.
    let c1 = copy_of(&t1, "liba.so");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&c1)
        .unwrap()
        .write_all_at(&[!(1000u32 * 7) as u8], 1000)
        .unwrap();
    let e = TraceReader::open(&t1).unwrap().check().unwrap_err();
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
    // The next trace of the file gets a fresh copy, which becomes the store's entry.
    let t2 = trace_with(&s, "t2", &exe, &[&a], &store);
    let c2 = copy_of(&t2, "liba.so");
    assert_ne!(c2.metadata().unwrap().ino(), c1.metadata().unwrap().ino());
    TraceReader::open(&t2).unwrap().check().unwrap();
    let t3 = trace_with(&s, "t3", &exe, &[&a], &store);
    assert_eq!(
        copy_of(&t3, "liba.so").metadata().unwrap().ino(),
        c2.metadata().unwrap().ino()
    );
    // Deleted traces leave entries nobody links: the next recording removes them.
    for t in [&t1, &t2, &t3] {
        std::fs::remove_dir_all(t).unwrap();
    }
    let entries = || std::fs::read_dir(&store).unwrap().count();
    assert_eq!(entries(), 2, "the program and the library");
    let t4 = s.path().join("t4");
    let other = s.path().join("other");
    std::fs::write(&other, b"another program").unwrap();
    let w = TraceWriter::create_sharing(&t4, header(), &other, Some(&store)).unwrap();
    w.finish(&done()).unwrap();
    assert_eq!(entries(), 1, "only the new trace's program");
}

#[test]
fn a_sparse_file_stays_sparse_in_the_trace_and_in_the_store() {
    let s = Scratch::new("sparse");
    let store = s.path().join(copies::STORE);
    let exe = fake_exe(&s);
    let p = s.path().join("sparse.db");
    let f = std::fs::File::create(&p).unwrap();
    let len = 256u64 << 20;
    f.set_len(len).unwrap();
    f.write_all_at(b"head", 0).unwrap();
    f.write_all_at(b"tail", len - 4).unwrap();
    drop(f);
    let t1 = trace_with(&s, "t1", &exe, &[&p], &store);
    let t2 = trace_with(&s, "t2", &exe, &[&p], &store);
    for t in [&t1, &t2] {
        let m = copy_of(t, "sparse.db").metadata().unwrap();
        assert_eq!(m.len(), len);
        assert!(
            m.blocks() * 512 < 8 << 20,
            "{} bytes used",
            m.blocks() * 512
        );
        TraceReader::open(t).unwrap().check().unwrap();
    }
    let c = std::fs::read(copy_of(&t2, "sparse.db")).unwrap();
    assert_eq!((&c[..4], &c[c.len() - 4..]), (&b"head"[..], &b"tail"[..]));
}

#[test]
fn without_a_store_each_trace_has_its_own_copies() {
    let s = Scratch::new("own");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.finish(&done()).unwrap();
    assert_eq!(copy_of(&dir, "prog").metadata().unwrap().nlink(), 1);
}
