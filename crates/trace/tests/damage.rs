//! Damaged, cut-off and foreign traces: errors that say what and where, never a panic.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use hindsight_trace::*;

/// A finished trace whose process 7 has `n` events, flushed every `per_frame` events.
fn small_trace(s: &Scratch, n: u64, per_frame: u64) -> (PathBuf, Vec<Event>) {
    let exe = fake_exe(s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(7, None, None)).unwrap();
    let mut all = Vec::new();
    for i in 0..n {
        let e = Event::Rdtsc {
            tid: 7,
            pc: 0x400000 + i,
            tsc: i * 1000,
            aux: (i % 2 == 0).then_some(i as u32),
        };
        w.append(7, &e).unwrap();
        all.push(e);
        if (i + 1) % per_frame == 0 {
            w.flush().unwrap();
        }
    }
    w.finish(&Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 5,
        events: n,
        threads: 1,
        processes: 1,
    })
    .unwrap();
    (dir, all)
}

/// Offsets at which each frame of an events file starts (reading the frame headers).
fn frame_offsets(path: &Path) -> Vec<usize> {
    let data = std::fs::read(path).unwrap();
    let mut offs = Vec::new();
    let mut off = 0;
    while off < data.len() {
        offs.push(off);
        let len = u32::from_le_bytes(data[off + 4..off + 8].try_into().unwrap()) as usize;
        off += 24 + len;
    }
    offs
}

#[test]
fn a_truncated_events_file_yields_the_whole_frames() {
    let s = Scratch::new("trunc");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events").join("7");
    let offs = frame_offsets(&ev);
    assert_eq!(offs.len(), 3);
    let len = std::fs::metadata(&ev).unwrap().len() as usize;
    // Cut inside the third frame's payload, inside its header, and right after the second.
    for cut in [len - 3, offs[2] + 10, offs[2] + 1] {
        let data = std::fs::read(&ev).unwrap();
        let damaged = s.path().join("copy");
        let _ = std::fs::remove_dir_all(&damaged);
        copy_dir(&dir, &damaged);
        std::fs::write(damaged.join("events").join("7"), &data[..cut]).unwrap();
        let r = TraceReader::open(&damaged).unwrap();
        let (events, truncated) = read_all(&r, 7);
        assert!(truncated, "cut at {cut}");
        assert_eq!(events, all[..20].to_vec(), "cut at {cut}");
    }
    // Cut exactly between frames: the end, not a truncation.
    let data = std::fs::read(&ev).unwrap();
    std::fs::write(&ev, &data[..offs[2]]).unwrap();
    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(read_all(&r, 7), (all[..20].to_vec(), false));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Reads process 7's events until an error, which it returns with the events before it.
fn read_until_error(r: &TraceReader) -> (Vec<Event>, TraceError) {
    let mut st = r.events(7).unwrap();
    let mut got = Vec::new();
    loop {
        match st.next_event() {
            Ok(Some(e)) => got.push(e),
            Ok(None) => panic!("no error after {} events", got.len()),
            Err(e) => {
                // The stream stays ended after an error.
                assert!(matches!(st.next_event(), Ok(None)));
                return (got, e);
            }
        }
    }
}

#[test]
fn a_flipped_byte_is_a_checksum_error_naming_file_and_offset() {
    let s = Scratch::new("flip");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events").join("7");
    let offs = frame_offsets(&ev);
    let orig = std::fs::read(&ev).unwrap();
    // Every byte of the second frame, header included.
    let end = offs[2];
    for at in offs[1]..end {
        let mut data = orig.clone();
        data[at] ^= 0x5a;
        std::fs::write(&ev, &data).unwrap();
        let r = TraceReader::open(&dir).unwrap();
        let (got, e) = read_until_error(&r);
        assert_eq!(got, all[..10].to_vec(), "flip at {at}");
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(msg.contains(&ev.display().to_string()), "{msg}");
        assert!(
            msg.contains(&format!(
                "events of process 7 are corrupted at byte {}",
                offs[1]
            )),
            "{msg}"
        );
        if at >= offs[1] + 4 {
            assert!(msg.contains("checksum mismatch"), "flip at {at}: {msg}");
        }
    }
    std::fs::write(&ev, &orig).unwrap();
    assert_eq!(read_all(&TraceReader::open(&dir).unwrap(), 7).0, all);
}

#[test]
fn garbage_events_files_never_panic() {
    let s = Scratch::new("garbage");
    let (dir, _) = small_trace(&s, 5, 5);
    let ev = dir.join("events").join("7");
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let len = (next() % 400) as usize;
        let mut data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 2 == 0 && data.len() >= 4 {
            data[..4].copy_from_slice(b"HSFR");
        }
        std::fs::write(&ev, &data).unwrap();
        let r = TraceReader::open(&dir).unwrap();
        let mut st = r.events(7).unwrap();
        for _ in 0..1000 {
            match st.next_event() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
}

fn header_with_version(dir: &Path, version: u32) {
    let hp = dir.join("header");
    let mut data = std::fs::read(&hp).unwrap();
    data[16..20].copy_from_slice(&version.to_le_bytes());
    std::fs::write(&hp, data).unwrap();
}

#[test]
fn a_newer_format_is_refused_by_name() {
    let s = Scratch::new("newer");
    let (dir, _) = small_trace(&s, 1, 1);
    header_with_version(&dir, FORMAT_VERSION + 1);
    let e = TraceReader::open(&dir).expect_err("must refuse");
    let msg = e.to_string();
    assert!(matches!(e, TraceError::TooNew { .. }), "{msg}");
    assert_eq!(
        msg,
        format!(
            "trace {} was written by a newer hindsight (format version {}; this one reads up to {})",
            dir.display(),
            FORMAT_VERSION + 1,
            FORMAT_VERSION
        )
    );
    // Refused before anything else is decoded: even with the rest of the header garbage.
    let hp = dir.join("header");
    let mut data = std::fs::read(&hp).unwrap();
    data.truncate(20);
    data.extend_from_slice(b"future stuff");
    std::fs::write(&hp, data).unwrap();
    assert!(matches!(
        TraceReader::open(&dir),
        Err(TraceError::TooNew { found, .. }) if found == FORMAT_VERSION + 1
    ));
}

#[test]
fn bad_headers_are_clear_errors() {
    let s = Scratch::new("badhdr");
    let (dir, _) = small_trace(&s, 1, 1);
    let hp = dir.join("header");
    let good = std::fs::read(&hp).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty"),
        (
            b"hello, I am not a trace at all".to_vec(),
            "not a hindsight trace",
        ),
        (good[..10].to_vec(), "not a hindsight trace"),
        (good[..20].to_vec(), "cut off"),
        (good[..good.len() - 1].to_vec(), "cut off"),
        (
            {
                let mut g = good.clone();
                let n = g.len();
                g[n - 2] ^= 1;
                g
            },
            "checksum mismatch",
        ),
    ];
    for (bytes, want) in cases {
        std::fs::write(&hp, &bytes).unwrap();
        let e = TraceReader::open(&dir).expect_err("must fail");
        let msg = e.to_string();
        assert!(msg.contains(want), "{want}: {msg}");
        assert!(msg.contains("header"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
    // Version 0 never existed.
    std::fs::write(&hp, &good).unwrap();
    header_with_version(&dir, 0);
    assert!(TraceReader::open(&dir).is_err());
    // No header at all; no directory at all.
    std::fs::remove_file(&hp).unwrap();
    let msg = TraceReader::open(&dir).err().unwrap().to_string();
    assert!(msg.contains("not a hindsight trace"), "{msg}");
    let msg = TraceReader::open(&s.path().join("nope"))
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("no such trace"), "{msg}");
}

#[test]
fn a_summary_without_the_marker_removed_is_still_incomplete() {
    let s = Scratch::new("marker");
    let (dir, _) = small_trace(&s, 1, 1);
    assert_eq!(TraceReader::open(&dir).unwrap().incomplete(), None);
    std::fs::write(dir.join("incomplete"), b"").unwrap();
    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(r.incomplete(), Some(""));
    // And no summary, no marker (marker lost): still not complete.
    std::fs::remove_file(dir.join("incomplete")).unwrap();
    std::fs::remove_file(dir.join("summary")).unwrap();
    assert_eq!(TraceReader::open(&dir).unwrap().incomplete(), Some(""));
}
