//! Writing a trace and reading it back.

mod common;

use common::*;
use hindsight_trace::*;

#[test]
fn every_record_round_trips() {
    let s = Scratch::new("every");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    assert_eq!(w.dir(), dir.as_path());
    w.add_process(process(100, None, None)).unwrap();
    w.add_process(process(200, Some(100), Some(1))).unwrap();
    w.note_exec(200, b"/bin/other", vec![b"other".to_vec(), b"x".to_vec()])
        .unwrap();
    w.note_exec(200, b"/bin/last", vec![b"last".to_vec()])
        .unwrap();
    w.note_process_end(200, ExitStatus::Killed(15)).unwrap();
    let events = every_event();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(w.append(100, e).unwrap(), i as u64);
    }
    assert_eq!(w.append(200, &events[0]).unwrap(), 0);
    assert_eq!(w.event_count(100), events.len() as u64);
    assert_eq!(w.event_count(200), 1);
    assert_eq!(w.event_count(300), 0);
    let summary = Summary {
        exit: ExitStatus::Exited(3),
        duration_ns: 1_234_567,
        events: events.len() as u64 + 1,
        threads: 3,
        processes: 2,
    };
    let out = w.finish(&summary).unwrap();
    assert_eq!(out, dir);

    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(r.dir(), dir.as_path());
    let mut h = header();
    h.format_version = FORMAT_VERSION;
    h.executable = 0;
    assert_eq!(r.header(), &h);
    assert_eq!(
        std::fs::read(r.file_path(0).unwrap()).unwrap(),
        std::fs::read(&exe).unwrap()
    );
    assert!(r.file_path(1).is_err());
    let mut p200 = process(200, Some(100), Some(1));
    p200.program = b"/bin/last".to_vec();
    p200.args = vec![b"last".to_vec()];
    assert_eq!(r.processes(), &[process(100, None, None), p200]);
    assert_eq!(r.process_end(200), Some(&ExitStatus::Killed(15)));
    assert_eq!(r.process_end(100), None);
    assert_eq!(r.summary(), Some(&summary));
    assert_eq!(r.incomplete(), None);
    assert!(r.size() > 0);
    assert_eq!(read_all(&r, 100), (events.clone(), false));
    assert_eq!(read_all(&r, 200), (vec![events[0].clone()], false));
    // A process that is not in the trace has no stream.
    let e = r.events(12345).err().expect("no such process");
    assert!(e.to_string().contains("no process 12345"), "{e}");
}

#[test]
fn event_accessors() {
    for e in every_event() {
        assert!(!e.kind_name().is_empty());
        match &e {
            Event::Syscall { tid, .. } | Event::Rdtsc { tid, .. } | Event::Preempt { tid, .. } => {
                assert_eq!(e.tid(), Some(*tid))
            }
            Event::ProcessExit { .. } => assert_eq!(e.tid(), None),
            _ => {}
        }
    }
    assert_eq!(every_event()[0].kind_name(), "syscall");
    assert_eq!(every_event()[4].kind_name(), "rdtsc");
}

#[test]
fn many_events_over_many_frames_and_processes() {
    let s = Scratch::new("many");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    let pids = [10, 20, 30];
    for (i, pid) in pids.iter().enumerate() {
        w.add_process(process(
            *pid,
            (i > 0).then_some(10),
            (i > 0).then_some(i as u64),
        ))
        .unwrap();
    }
    let make = |pid: i32, i: u64| Event::Syscall {
        tid: pid,
        nr: i,
        args: [i, i * 2, i * 3, 0, 0, u64::from(pid as u32)],
        result: i as i64,
        writes: vec![MemWrite {
            addr: 0x1000 + i,
            // Poorly compressible, so that frames fill up.
            data: (0..200u64)
                .map(|k| (k.wrapping_mul(i + 7).wrapping_mul(0x9e37_79b9) >> 13) as u8)
                .collect(),
        }],
        mapped: None,
    };
    let n = 6000u64;
    for i in 0..n {
        for pid in pids {
            if pid == 30 && i % 3 != 0 {
                continue;
            }
            w.append(pid, &make(pid, i)).unwrap();
        }
        if i == 1000 {
            w.flush().unwrap();
        }
    }
    w.finish(&Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 1,
        events: 0,
        threads: 3,
        processes: 3,
    })
    .unwrap();
    let events_file = dir.join("events").join("10");
    // 6000 events of > 200 bytes: more than 256 KiB, so several frames.
    assert!(std::fs::metadata(&events_file).unwrap().len() > 600_000);

    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(r.processes().len(), 3);
    for pid in pids {
        let mut st = r.events(pid).unwrap();
        let mut i = 0;
        while let Some(e) = st.next_event().unwrap() {
            while pid == 30 && i % 3 != 0 {
                i += 1;
            }
            assert_eq!(e, make(pid, i), "pid {pid} event {i}");
            assert_eq!(st.position(), {
                if pid == 30 {
                    i / 3 + 1
                } else {
                    i + 1
                }
            });
            i += 1;
        }
        assert!(!st.truncated());
        assert!(i >= n - 2, "pid {pid}: only {i} events");
    }
}

#[test]
fn an_event_larger_than_a_frame_round_trips() {
    let s = Scratch::new("huge");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(1, None, None)).unwrap();
    let small = Event::ThreadExit { tid: 1 };
    // 70 MiB: more than a frame may hold (64 MiB), so a chain of frames.
    let data: Vec<u8> = (0..70u32 << 20)
        .map(|k| (k.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let big = Event::Syscall {
        tid: 1,
        nr: 0,
        args: [0; 6],
        result: data.len() as i64,
        writes: vec![MemWrite { addr: 0x10, data }],
        mapped: None,
    };
    w.append(1, &small).unwrap();
    w.append(1, &big).unwrap();
    w.append(1, &small).unwrap();
    w.abandon("test").unwrap();
    let r = TraceReader::open(&dir).unwrap();
    let (events, truncated) = read_all(&r, 1);
    assert!(!truncated);
    assert_eq!(events.len(), 3);
    assert!(events[1] == big);
}

#[test]
fn refuses_to_create_over_an_existing_directory() {
    let s = Scratch::new("exists");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("precious"), b"keep").unwrap();
    let e = TraceWriter::create(&dir, header(), &exe)
        .err()
        .expect("must refuse");
    assert!(matches!(e, TraceError::Exists(_)), "{e}");
    assert!(e.to_string().contains("already exists"), "{e}");
    assert_eq!(std::fs::read(dir.join("precious")).unwrap(), b"keep");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    // Nor a file.
    let f = s.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    assert!(TraceWriter::create(&f, header(), &exe).is_err());
    assert_eq!(std::fs::read(&f).unwrap(), b"x");
}

#[test]
fn a_missing_executable_is_an_error() {
    let s = Scratch::new("noexe");
    let dir = s.path().join("t");
    let e = TraceWriter::create(&dir, header(), &s.path().join("nothing"))
        .err()
        .expect("must fail");
    assert!(e.to_string().contains("nothing"), "{e}");
    assert!(
        !dir.exists(),
        "a trace that could not be started is removed"
    );
}

#[test]
fn an_abandoned_trace_is_incomplete_with_its_reason() {
    let s = Scratch::new("abandon");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(5, None, None)).unwrap();
    w.append(5, &Event::ThreadExit { tid: 5 }).unwrap();
    w.abandon("the recorder was killed\nby a signal").unwrap();
    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(r.incomplete(), Some("the recorder was killed by a signal"));
    assert_eq!(r.summary(), None);
    assert_eq!(read_all(&r, 5).0, vec![Event::ThreadExit { tid: 5 }]);
}

#[test]
fn a_trace_still_being_written_is_incomplete() {
    let s = Scratch::new("live");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(5, None, None)).unwrap();
    w.append(5, &Event::ThreadExit { tid: 5 }).unwrap();
    {
        let r = TraceReader::open(&dir).unwrap();
        assert_eq!(
            r.incomplete(),
            Some("the recorder was stopped before it could end the recording")
        );
        assert_eq!(r.processes().len(), 1);
    }
    w.flush().unwrap();
    let r = TraceReader::open(&dir).unwrap();
    assert_eq!(read_all(&r, 5).0, vec![Event::ThreadExit { tid: 5 }]);
    // Dropping the writer without ending the recording writes out what it had.
    w.append(5, &Event::ThreadExit { tid: 6 }).unwrap();
    drop(w);
    let r = TraceReader::open(&dir).unwrap();
    assert!(r.incomplete().is_some());
    assert_eq!(read_all(&r, 5).0.len(), 2);
}

#[test]
fn add_file_copies_each_file_once() {
    let s = Scratch::new("files");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    assert_eq!(w.add_file(&exe).unwrap(), 0, "the executable is file 0");
    let lib = s.path().join("libfoo.so.1");
    std::fs::write(&lib, b"library bytes").unwrap();
    let other = s.path().join("data.bin");
    std::fs::write(&other, b"other bytes").unwrap();
    assert_eq!(w.add_file(&lib).unwrap(), 1);
    assert_eq!(w.add_file(&other).unwrap(), 2);
    assert_eq!(w.add_file(&lib).unwrap(), 1);
    // Another name for the same file is the same file.
    let link = s.path().join("alias.so");
    std::fs::hard_link(&lib, &link).unwrap();
    assert_eq!(w.add_file(&link).unwrap(), 1);
    assert!(w.add_file(&s.path().join("missing")).is_err());
    w.finish(&Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 0,
        events: 0,
        threads: 1,
        processes: 1,
    })
    .unwrap();
    let r = TraceReader::open(&dir).unwrap();
    let p1 = r.file_path(1).unwrap();
    assert!(
        p1.to_string_lossy().ends_with("1-libfoo.so.1"),
        "{}",
        p1.display()
    );
    assert_eq!(std::fs::read(p1).unwrap(), b"library bytes");
    assert_eq!(
        std::fs::read(r.file_path(2).unwrap()).unwrap(),
        b"other bytes"
    );
    assert_eq!(std::fs::read_dir(dir.join("files")).unwrap().count(), 3);
}

#[test]
fn links_keep_the_order_of_events_and_the_transfers() {
    let s = Scratch::new("links");
    let exe = fake_exe(&s);
    let dir = s.path().join("t");
    let mut w = TraceWriter::create(&dir, header(), &exe).unwrap();
    w.add_process(process(100, None, None)).unwrap();
    w.add_process(process(200, Some(100), Some(1))).unwrap();
    let e = &every_event()[0];
    for pid in [100, 100, 200, 100, 200, 200] {
        w.append(pid, e).unwrap();
    }
    let pipe = w.channel(ChannelKind::Pipe, "pipe:[7]").unwrap();
    assert_eq!(w.channel(ChannelKind::Pipe, "pipe:[7]").unwrap(), pipe);
    let exit = w.channel(ChannelKind::Exit, "exit of 200").unwrap();
    assert_ne!(pipe, exit);
    let send = Transfer {
        pid: 100,
        event: 1,
        direction: Direction::Send,
        channel: pipe,
        start: 0,
        len: 12,
        call: 0,
    };
    w.transfer(send.clone()).unwrap();
    // Written between two flushes: the turns still come out whole.
    w.flush().unwrap();
    w.append(100, e).unwrap();
    let summary = Summary {
        exit: ExitStatus::Exited(0),
        duration_ns: 1,
        events: 7,
        threads: 2,
        processes: 2,
    };
    w.finish(&summary).unwrap();
    let r = TraceReader::open(&dir).unwrap();
    let links = r.links().unwrap().unwrap();
    assert_eq!(
        links.turns,
        vec![(100, 2), (200, 1), (100, 1), (200, 2), (100, 1)]
    );
    assert_eq!(links.channels.len(), 2);
    assert_eq!(links.channel(exit).unwrap().kind, ChannelKind::Exit);
    assert_eq!(links.transfers, vec![send]);
    r.check().unwrap();
}
