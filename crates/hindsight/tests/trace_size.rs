//! What a trace takes on disk: event streams compressed (zstd), copies of mapped files shared
//! between traces (hard links to one store), sparse files kept sparse; and damage to any of
//! them still an error in one line naming the file.

mod common;

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// Bytes of the files directly in `dir`.
fn bytes_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// The copies of a trace by their name without the id (`libc.so.6`): (device, inode, bytes
/// used on disk, size).
fn copies(trace: &Path) -> HashMap<String, (u64, u64, u64, u64)> {
    std::fs::read_dir(trace.join("files"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let m = e.metadata().unwrap();
            let base = name.split_once('-').map_or(name.clone(), |(_, b)| b.into());
            (base, (m.dev(), m.ino(), m.blocks() * 512, m.len()))
        })
        .collect()
}

/// `hindsight replay TRACE --batch -ex continue`: the program's output again, on stdout.
fn replay_to_end(trace: &Path) -> Run {
    let r = hindsight(&[
        os("replay"),
        trace.as_os_str(),
        os("--batch"),
        os("-ex"),
        os("continue"),
    ]);
    assert_eq!(r.code, 0, "{}", r.dump());
    r
}

/// The `Size:` line of `hindsight info TRACE`.
fn size_line(trace: &Path) -> String {
    let r = hindsight(&[os("info"), trace.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.dump());
    r.stdout
        .lines()
        .find(|l| l.starts_with("Size:"))
        .unwrap_or_else(|| panic!("no Size line{}", r.dump()))
        .to_string()
}

#[test]
fn a_sqlite3_query_trace_is_smaller_than_one_and_a_half_times_its_database() {
    let sqlite = Path::new("/usr/bin/sqlite3");
    assert!(
        sqlite.exists(),
        "sqlite3 is needed (apt-get install sqlite3; .ci/run installs it)"
    );
    let db = scratch().join(format!("size-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    // Rows of random hex text, as the benchmark's database: pages that lz4 barely shrinks.
    let made = Command::new(sqlite)
        .arg(&db)
        .arg(
            "create table t(a integer, b text);
             with recursive n(i) as (select 1 union all select i + 1 from n where i < 12000)
             insert into t select abs(random()) % 1000, hex(randomblob(100)) from n;",
        )
        .status()
        .unwrap();
    assert!(made.success());
    let db_size = std::fs::metadata(&db).unwrap().len();
    assert!(db_size > 2 << 20, "{db_size}");
    let query = "select a % 7, count(*), sum(length(b)) from t group by 1";
    let want = native(sqlite, &[db.to_str().unwrap(), query]);
    let (trace, rec) = record_trace(sqlite, &[db.to_str().unwrap(), query]);
    assert_eq!(rec.stdout, want);
    // The query reads every page at least once (the group by twice): all of it is in the
    // events, compressed.
    let events = bytes_in(&trace.join("events"));
    assert!(
        events * 2 <= db_size * 3,
        "{events} bytes of events for a {db_size}-byte database"
    );
    let line = size_line(&trace);
    assert!(line.contains("(events "), "{line}");
    let r = replay_to_end(&trace);
    assert!(r.stdout.contains(&want), "{}", r.dump());
    let _ = std::fs::remove_file(&db);
}

#[test]
fn a_second_recording_links_the_copies_of_the_first() {
    let prog = compile("rr_forkpipe", &[]);
    let (first, _) = record_trace(&prog, &[]);
    let (second, _) = record_trace(&prog, &[]);
    let (a, b) = (copies(&first), copies(&second));
    assert!(b.contains_key("libc.so.6"), "{b:?}");
    assert_eq!(
        a.keys().collect::<std::collections::BTreeSet<_>>(),
        b.keys().collect()
    );
    for (name, (dev, ino, _, _)) in &b {
        // The same file on disk: the second recording wrote no byte of its copies.
        assert_eq!((a[name].0, a[name].1), (*dev, *ino), "{name}");
    }
    // The store holds them, next to the traces.
    let store = scratch().join("hindsight-dir").join(".copies");
    let in_store: std::collections::HashSet<(u64, u64)> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| {
            let m = e.unwrap().metadata().unwrap();
            (m.dev(), m.ino())
        })
        .collect();
    assert!(b.values().all(|(d, i, _, _)| in_store.contains(&(*d, *i))));
    // What a user sees: every copy shared.
    let line = size_line(&second);
    let copies_part = line
        .split("copies of mapped files ")
        .nth(1)
        .and_then(|s| s.split_once(", "))
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(
        copies_part.1,
        format!("{} of them shared with other traces)", copies_part.0),
        "{line}"
    );
    // Both replay.
    for t in [&first, &second] {
        let r = replay_batch(t, &["continue"]);
        assert_eq!(r.code, 0, "{}", r.dump());
    }
    // A deleted trace does not take the other's copies with it.
    std::fs::remove_dir_all(&first).unwrap();
    let r = hindsight(&[os("info"), os("--check"), second.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.dump());
}

/// A copy of `trace` whose files are all its own (not linked to the store): damaging it
/// damages nothing else.
fn private_copy(trace: &Path, name: &str) -> PathBuf {
    let to = scratch().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    let st = Command::new("cp")
        .arg("-r")
        .arg(trace)
        .arg(&to)
        .status()
        .unwrap();
    assert!(st.success());
    to
}

#[test]
fn a_damaged_compressed_stream_is_one_line_naming_it() {
    let prog = compile("rr_forkpipe", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let bad = private_copy(&trace, "damaged-zstd");
    let ev = std::fs::read_dir(bad.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut data = std::fs::read(&ev).unwrap();
    assert_eq!(&data[..4], b"HSFZ", "frames are zstd");
    // A byte inside the first frame's compressed payload.
    let at = 32 + (data.len() - 32) / 3;
    data[at] ^= 0x5a;
    std::fs::write(&ev, &data).unwrap();
    let r = replay_batch(&bad, &["continue"]);
    assert_ne!(r.code, 0, "{}", r.dump());
    let errs: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(&*ev.to_string_lossy()))
        .collect();
    assert_eq!(errs.len(), 1, "{}", r.dump());
    assert!(
        errs[0].contains("damaged") || errs[0].contains("corrupt"),
        "{}",
        errs[0]
    );
    let r = hindsight(&[os("info"), os("--check"), bad.as_os_str()]);
    assert_ne!(r.code, 0);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.dump());
    assert!(r.stderr.contains(&*ev.to_string_lossy()), "{}", r.dump());
    let _ = std::fs::remove_dir_all(&bad);
}

#[test]
fn a_sparse_file_stays_sparse_and_is_shared() {
    let prog = compile("sparse_map", &[]);
    let (first, r1) = record_trace(&prog, &[]);
    let (second, r2) = record_trace(&prog, &[]);
    assert_eq!(r1.stdout, "last byte x, middle 7, start 0\n");
    assert_eq!(r2.stdout, r1.stdout);
    let (a, b) = (copies(&first), copies(&second));
    // The 64 GiB file the program made (a fresh one each run, unlinked before it was mapped:
    // copied through its descriptor), same contents.
    let big: Vec<&(u64, u64, u64, u64)> = b.values().filter(|c| c.3 > 64 << 30).collect();
    assert_eq!(big.len(), 1, "{b:?}");
    let used: u64 = b.values().map(|c| c.2).sum();
    assert!(used < 64 << 20, "the copies use {used} bytes");
    assert!(
        a.values().any(|c| c.1 == big[0].1),
        "the second recording links the first one's copy: {a:?} {b:?}"
    );
    replay_to_end(&second).has("last byte x, middle 7, start 0");
}
