//! Damaged, cut-off and foreign traces: errors that say what and where, never a panic, never
//! events other than the recorded ones, never a stream that ends quietly where the recording
//! did not.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use common::*;
use hindsight_trace::*;
use proptest::prelude::*;

fn summary(n: u64) -> Summary {
    Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 5,
        events: n,
        threads: 1,
        processes: 1,
    }
}

fn event(i: u64) -> Event {
    Event::Rdtsc {
        tid: 7,
        pc: 0x400000 + i,
        tsc: i * 1000,
        aux: i.is_multiple_of(2).then_some(i as u32),
    }
}

/// A finished trace in `s/name` whose process 7 has the events `all`, flushed every
/// `per_frame` events; and, in `s/name-cut`, the same trace as a recorder killed after
/// `listed` events had been listed (the rest written, unlisted).
fn traces(
    s: &Scratch,
    name: &str,
    all: &[Event],
    per_frame: u64,
    listed: u64,
) -> (PathBuf, PathBuf) {
    let exe = fake_exe(s);
    let dir = s.path().join(name);
    let cut = s.path().join(format!("{name}-cut"));
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(7, None, None)).unwrap();
    for (i, e) in all.iter().enumerate() {
        let i = i as u64;
        if i == listed {
            w.flush().unwrap();
            copy_dir(&dir, &cut);
        }
        w.append(7, e).unwrap();
        if (i + 1).is_multiple_of(per_frame) {
            w.flush().unwrap();
        }
    }
    if listed >= all.len() as u64 {
        w.flush().unwrap();
        copy_dir(&dir, &cut);
    }
    w.finish(&summary(all.len() as u64)).unwrap();
    // The killed recorder had written every frame: only its list was older.
    std::fs::copy(dir.join("events/7"), cut.join("events/7")).unwrap();
    (dir, cut)
}

fn small_trace(s: &Scratch, n: u64, per_frame: u64) -> (PathBuf, Vec<Event>) {
    let all: Vec<Event> = (0..n).map(event).collect();
    let (dir, _) = traces(s, "t", &all, per_frame, n);
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
        off += frame::HEADER + len;
    }
    offs
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
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

/// Reads process `pid`'s events: those before the end or the first error, and how it ended.
fn read_stream(r: &TraceReader, pid: i32) -> (Vec<Event>, Result<bool, TraceError>) {
    let mut st = match r.events(pid) {
        Ok(s) => s,
        Err(e) => return (vec![], Err(e)),
    };
    let mut got = Vec::new();
    loop {
        match st.next_event() {
            Ok(Some(e)) => got.push(e),
            Ok(None) => return (got, Ok(st.truncated())),
            Err(e) => {
                // The stream stays ended after an error.
                assert!(matches!(st.next_event(), Ok(None)));
                return (got, Err(e));
            }
        }
    }
}

fn assert_one_line_naming(e: &TraceError, file: &Path, what: &str) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    assert!(msg.contains(what), "wanted '{what}': {msg}");
}

#[test]
fn a_truncated_stream_yields_its_whole_frames_then_says_where_it_is_cut() {
    let s = Scratch::new("trunc");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events").join("7");
    let offs = frame_offsets(&ev);
    assert_eq!(offs.len(), 3);
    let data = std::fs::read(&ev).unwrap();
    let len = data.len();
    // Cut inside the third frame's payload, inside its header, right after the second, and
    // to nothing.
    for cut in [len - 3, offs[2] + 10, offs[2] + 1, offs[2], 0] {
        std::fs::write(&ev, &data[..cut]).unwrap();
        let r = TraceReader::open(&dir).unwrap();
        let (events, end) = read_stream(&r, 7);
        let whole = if cut >= offs[2] { 20 } else { 0 };
        assert_eq!(events, all[..whole].to_vec(), "cut at {cut}");
        let e = end.expect_err("a finished trace never ends early quietly");
        assert_one_line_naming(&e, &ev, &format!("cut off at byte {}", offs[whole / 10]));
        assert!(
            e.to_string()
                .contains(&format!("of the {len} the trace lists")),
            "{e}"
        );
    }
}

#[test]
fn a_killed_recording_reads_to_its_last_whole_frame() {
    let s = Scratch::new("killed");
    let all: Vec<Event> = (0..30).map(event).collect();
    // Listed up to event 20; the third frame was written after the last list.
    let (_, cut) = traces(&s, "t", &all, 10, 20);
    let r = TraceReader::open(&cut).unwrap();
    assert_eq!(
        r.incomplete(),
        Some("the recorder was stopped before it could end the recording")
    );
    assert_eq!(r.summary(), None);
    assert_eq!(read_stream(&r, 7).0, all);
    let ev = cut.join("events").join("7");
    let offs = frame_offsets(&ev);
    let data = std::fs::read(&ev).unwrap();
    // Cut inside the unlisted frame: its events are lost, quietly (the recorder died there).
    for c in [data.len() - 1, offs[2] + 3, offs[2]] {
        std::fs::write(&ev, &data[..c]).unwrap();
        let r = TraceReader::open(&cut).unwrap();
        let (events, end) = read_stream(&r, 7);
        assert_eq!(events, all[..20].to_vec(), "cut at {c}");
        assert_eq!(end.unwrap(), c != offs[2], "truncated, cut at {c}");
    }
    // Cut inside what was listed: damage.
    std::fs::write(&ev, &data[..offs[2] - 1]).unwrap();
    let r = TraceReader::open(&cut).unwrap();
    let (events, end) = read_stream(&r, 7);
    assert_eq!(events, all[..10].to_vec());
    assert_one_line_naming(&end.unwrap_err(), &ev, "cut off");
}

#[test]
fn a_flipped_byte_is_a_checksum_error_naming_file_and_offset() {
    let s = Scratch::new("flip");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events").join("7");
    let offs = frame_offsets(&ev);
    let orig = std::fs::read(&ev).unwrap();
    // Every byte of the second frame, header included.
    for at in offs[1]..offs[2] {
        let mut data = orig.clone();
        data[at] ^= 0x5a;
        std::fs::write(&ev, &data).unwrap();
        let r = TraceReader::open(&dir).unwrap();
        let (got, end) = read_stream(&r, 7);
        assert_eq!(got, all[..10].to_vec(), "flip at {at}");
        let e = end.unwrap_err();
        assert_one_line_naming(
            &e,
            &ev,
            &format!("events of process 7 are corrupted at byte {}", offs[1]),
        );
        if at >= offs[1] + 4 {
            assert!(
                e.to_string().contains("checksum mismatch"),
                "flip at {at}: {e}"
            );
        }
    }
    std::fs::write(&ev, &orig).unwrap();
    assert_eq!(read_stream(&TraceReader::open(&dir).unwrap(), 7).0, all);
}

#[test]
fn frames_moved_repeated_or_left_out_are_errors() {
    let s = Scratch::new("moved");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events").join("7");
    let offs = frame_offsets(&ev);
    let orig = std::fs::read(&ev).unwrap();
    let (f0, f1, f2) = (&orig[..offs[1]], &orig[offs[1]..offs[2]], &orig[offs[2]..]);
    let cases: Vec<(Vec<u8>, usize)> = vec![
        ([f1, f0, f2].concat(), 0),
        ([f0, f2, f1].concat(), 10),
        ([f0, f0, f2].concat(), 10),
    ];
    for (data, good) in cases {
        std::fs::write(&ev, &data).unwrap();
        if data.len() > orig.len() {
            // Larger: refused at once.
            assert_one_line_naming(&TraceReader::open(&dir).unwrap_err(), &ev, "damaged");
            continue;
        }
        let r = TraceReader::open(&dir).unwrap();
        let (got, end) = read_stream(&r, 7);
        assert_eq!(got, all[..good].to_vec());
        assert_one_line_naming(&end.unwrap_err(), &ev, "out of place");
    }
}

#[test]
fn missing_and_extra_bytes_and_damaged_copies_are_named() {
    let s = Scratch::new("files");
    let (dir, all) = small_trace(&s, 30, 10);
    let fresh = s.path().join("fresh");
    let reset = || copy_dir(&dir, &fresh);
    let ev = fresh.join("events/7");
    let copy = fresh.join("files/0-prog");

    // A deleted stream, a deleted copy, the deleted process journal.
    for gone in [&ev, &copy, &fresh.join("processes")] {
        reset();
        std::fs::remove_file(gone).unwrap();
        let e = TraceReader::open(&fresh).unwrap_err();
        assert_one_line_naming(&e, gone, "missing from the trace");
    }
    // Bytes appended to a stream, to the journal, to a copy.
    for grown in [&ev, &fresh.join("processes"), &copy] {
        reset();
        let mut data = std::fs::read(grown).unwrap();
        data.extend_from_slice(b"more");
        std::fs::write(grown, &data).unwrap();
        let e = TraceReader::open(&fresh).unwrap_err();
        assert_one_line_naming(&e, grown, "damaged");
    }
    // A copy of the same size with other bytes: refused when it is asked for.
    reset();
    let mut data = std::fs::read(&copy).unwrap();
    data[3] ^= 1;
    std::fs::write(&copy, &data).unwrap();
    let r = TraceReader::open(&fresh).unwrap();
    assert_one_line_naming(&r.file_path(0).unwrap_err(), &copy, "checksum mismatch");
    assert_one_line_naming(&r.check().unwrap_err(), &copy, "checksum mismatch");
    // A copy cut short: refused at once.
    reset();
    std::fs::write(&copy, &data[..5]).unwrap();
    assert_one_line_naming(&TraceReader::open(&fresh).unwrap_err(), &copy, "damaged");
    // The journal with a byte changed.
    reset();
    let pp = fresh.join("processes");
    let mut data = std::fs::read(&pp).unwrap();
    let n = data.len();
    data[n - 1] ^= 0x10;
    std::fs::write(&pp, &data).unwrap();
    assert_one_line_naming(&TraceReader::open(&fresh).unwrap_err(), &pp, "damaged");
    // Two streams swapped: a stream of the same size but other contents is noticed at its end.
    reset();
    let r = TraceReader::open(&fresh).unwrap();
    let checked = r.check().unwrap();
    assert_eq!(checked.events, 30);
    // processes, links, events/7, the executable's copy.
    assert_eq!(checked.files, 4);
    assert!(checked.cut_off.is_empty());
    assert_eq!(read_stream(&r, 7).0, all);
}

#[test]
fn a_stream_of_the_right_size_with_other_events_is_refused_at_its_end() {
    let s = Scratch::new("other");
    let (dir, all) = small_trace(&s, 30, 10);
    let ev = dir.join("events/7");
    let offs = frame_offsets(&ev);
    let orig = std::fs::read(&ev).unwrap();
    // The second frame made again, whole and well formed, around other events of the same
    // size: each frame checks out, only the list's checksum can tell.
    let Ok(frame::Read::Frame(raw, count, _)) =
        frame::read_from(&mut &orig[offs[1]..offs[2]], 0, 10)
    else {
        panic!("cannot decode the second frame")
    };
    let forged = (1..=255u8)
        .map(|x| {
            let mut r = raw.clone();
            let n = r.len();
            r[n - 2] ^= x;
            frame::encode(&r, count, 10)
        })
        .find(|f| f.len() == offs[2] - offs[1])
        .expect("an other frame of the same size");
    let data = [&orig[..offs[1]], &forged[..], &orig[offs[2]..]].concat();
    std::fs::write(&ev, &data).unwrap();
    let r = TraceReader::open(&dir).unwrap();
    let (got, end) = read_stream(&r, 7);
    assert_eq!(&got[..10], &all[..10]);
    assert_ne!(got[10..20], all[10..20]);
    assert_one_line_naming(&end.unwrap_err(), &ev, "checksum mismatch");
    assert!(r.check().is_err());
}

#[test]
fn garbage_events_files_never_panic() {
    let s = Scratch::new("garbage");
    let all: Vec<Event> = (0..5).map(event).collect();
    let (dir, cut) = traces(&s, "t", &all, 5, 0);
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
        for t in [&dir, &cut] {
            std::fs::write(t.join("events/7"), &data).unwrap();
            if let Ok(r) = TraceReader::open(t) {
                let (got, end) = read_stream(&r, 7);
                assert!(got.is_empty() || end.is_err(), "garbage decoded");
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
fn another_format_is_refused_by_name() {
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
    // Format 2 (frames in lz4; each frame's magic says which) is still read.
    let s2 = Scratch::new("format2");
    let (dir2, _) = small_trace(&s2, 1, 1);
    header_with_version(&dir2, 2);
    let r = TraceReader::open(&dir2).expect("format 2 is read");
    assert_eq!(r.header().format_version, 2);
    r.check().expect("and checks out");
    // An older format: refused by name too.
    header_with_version(&dir, 1);
    let e = TraceReader::open(&dir).expect_err("must refuse");
    assert!(matches!(e, TraceError::TooOld { found: 1, .. }), "{e}");
    assert!(
        e.to_string().contains("older hindsight (format version 1"),
        "{e}"
    );
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
fn a_trace_is_readable_by_its_owner_only() {
    let s = Scratch::new("private");
    let (dir, _) = small_trace(&s, 3, 1);
    let mut seen = 0;
    let mut walk = vec![dir.clone()];
    while let Some(p) = walk.pop() {
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(
            m.permissions().mode() & 0o077,
            0,
            "{} is {:o}",
            p.display(),
            m.permissions().mode()
        );
        if m.is_dir() {
            assert_eq!(m.permissions().mode() & 0o700, 0o700);
            walk.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
        seen += 1;
    }
    // The directory, events/, files/, header, processes, links, events/7, the executable's
    // copy.
    assert_eq!(seen, 8);
}

/// A way to damage bytes.
#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Append(Vec<u8>),
    Repeat(usize, usize),
    Zero(usize, usize),
}

fn damage_strategy() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(a, x)| Damage::Flip(a, x)),
        any::<usize>().prop_map(Damage::Truncate),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..40)
        )
            .prop_map(|(a, b)| Damage::Insert(a, b)),
        (any::<usize>(), 1..200usize).prop_map(|(a, n)| Damage::Delete(a, n)),
        proptest::collection::vec(any::<u8>(), 1..40).prop_map(Damage::Append),
        (any::<usize>(), 1..200usize).prop_map(|(a, n)| Damage::Repeat(a, n)),
        (any::<usize>(), 1..200usize).prop_map(|(a, n)| Damage::Zero(a, n)),
    ]
}

fn apply(d: &Damage, data: &mut Vec<u8>) {
    if data.is_empty() {
        if let Damage::Append(b) | Damage::Insert(_, b) = d {
            data.extend_from_slice(b);
        }
        return;
    }
    let n = data.len();
    match d {
        Damage::Flip(a, x) => data[a % n] ^= x,
        Damage::Truncate(a) => data.truncate(a % n),
        Damage::Insert(a, b) => {
            let at = a % n;
            data.splice(at..at, b.iter().copied());
        }
        Damage::Delete(a, k) => {
            let at = a % n;
            data.drain(at..(at + k).min(n));
        }
        Damage::Append(b) => data.extend_from_slice(b),
        Damage::Repeat(a, k) => {
            let at = a % n;
            let piece = data[at..(at + k).min(n)].to_vec();
            data.splice(at..at, piece);
        }
        Damage::Zero(a, k) => {
            let at = a % n;
            let end = (at + k).min(n);
            data[at..end].iter_mut().for_each(|b| *b = 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever happens to a stream, the journal or the header, reading gives the recorded
    /// events or a prefix of them, then an error — or, for a recording that was cut off, a
    /// quiet end no earlier than what it had listed. Never a panic, never another event.
    #[test]
    fn damage_gives_an_error_or_a_true_prefix(
        values in proptest::collection::vec(any::<u64>(), 1..60),
        per_frame in 1..8u64,
        listed_frac in 0..=4u64,
        which in 0..3usize,
        damages in proptest::collection::vec(damage_strategy(), 1..4),
    ) {
        let s = Scratch::new("prop");
        let all: Vec<Event> = values.iter().map(|v| Event::Output {
            pid: 7,
            fd: 1 + (*v % 2) as i32,
            data: v.to_le_bytes()[..(*v % 9) as usize].to_vec(),
        }).collect();
        let n = all.len() as u64;
        let listed = n * listed_frac / 4;
        let (dir, cut) = traces(&s, "t", &all, per_frame, listed);
        for (t, finished) in [(&dir, true), (&cut, false)] {
            let file = t.join(["events/7", "processes", "header"][which]);
            let before = std::fs::read(&file).unwrap();
            let mut data = before.clone();
            for d in &damages {
                apply(d, &mut data);
            }
            std::fs::write(&file, &data).unwrap();
            let Ok(r) = TraceReader::open(t) else { continue };
            let (got, end) = read_stream(&r, 7);
            prop_assert!(got.len() <= all.len());
            prop_assert_eq!(&got[..], &all[..got.len()], "another event");
            if end.is_ok() {
                if finished {
                    prop_assert_eq!(got.len(), all.len(), "a finished trace ended early");
                } else {
                    prop_assert!(got.len() as u64 >= listed, "ended before what was listed");
                }
            }
        }
    }
}
