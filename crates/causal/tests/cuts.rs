//! Consistent cuts on simulated message-passing runs: the ack protocol of issue 16 by hand,
//! and random runs against a happens-before computed by brute force.

use std::collections::HashSet;

use hindsight_causal::{Causality, EventId, Point};
use hindsight_trace::{Batch, Channel, ChannelKind, Direction, Link, Links, ProcessInfo, Transfer};
use proptest::prelude::*;

fn process(pid: i32, parent: Option<(i32, u64)>) -> ProcessInfo {
    ProcessInfo {
        pid,
        parent: parent.map(|p| p.0),
        fork_event: parent.map(|p| p.1),
        program: b"/bin/true".to_vec(),
        args: Vec::new(),
    }
}

/// A run being simulated: processes take turns, one event at a time.
struct Sim {
    links: Links,
    events: Vec<u64>,
    /// Per channel: (units sent, units received).
    sent: Vec<(u64, u64)>,
}

impl Sim {
    fn new(processes: usize, channels: &[ChannelKind]) -> Sim {
        let mut links = Links::default();
        for (id, kind) in channels.iter().enumerate() {
            links.push(Link::Channel(Channel {
                id: id as u32,
                kind: *kind,
                name: format!("c{id}"),
            }));
        }
        Sim {
            links,
            events: vec![0; processes],
            sent: vec![(0, 0); channels.len()],
        }
    }

    fn pid(p: usize) -> i32 {
        100 + p as i32
    }

    /// Process `p` runs one event, moving `units` through `channel` (if any); returns it.
    fn step(&mut self, p: usize, io: Option<(u32, Direction, u64)>) -> EventId {
        let event = self.events[p];
        self.events[p] += 1;
        self.links.push(Link::Turn {
            pid: Sim::pid(p),
            events: 1,
        });
        if let Some((channel, direction, len)) = io {
            let c = &mut self.sent[channel as usize];
            let count = match direction {
                Direction::Send => &mut c.0,
                Direction::Receive => &mut c.1,
            };
            let start = *count;
            *count += len;
            self.links.push(Link::Transfer(Transfer {
                pid: Sim::pid(p),
                event,
                direction,
                channel,
                start,
                len,
                call: 0,
            }));
        }
        EventId {
            pid: Sim::pid(p),
            event,
        }
    }
}

/// The test: the producer waits for ack k before sending message k+1. A stop of the
/// consumer after it received message k holds the producer having sent k and received k-1
/// acks; a stop of the producer before it sends message k holds the consumer before its
/// k-th receive.
#[test]
fn producer_and_consumer_with_acknowledgements() {
    let (prod, cons) = (0, 1);
    let mut s = Sim::new(2, &[ChannelKind::Pipe, ChannelKind::Pipe]);
    let n = 5;
    let mut sends = Vec::new();
    let mut receives = Vec::new();
    let mut acks = Vec::new();
    s.step(prod, None);
    s.step(cons, None);
    for _ in 0..n {
        sends.push(s.step(prod, Some((0, Direction::Send, 8))));
        s.step(prod, None);
        receives.push(s.step(cons, Some((0, Direction::Receive, 8))));
        s.step(cons, None);
        acks.push(s.step(cons, Some((1, Direction::Send, 4))));
        s.step(prod, Some((1, Direction::Receive, 4)));
    }
    let c = Causality::build(
        &s.links,
        &[process(100, None), process(101, Some((100, 0)))],
    )
    .unwrap();
    assert_eq!(c.messages().len(), 2 * n);
    for k in 1..=n {
        // The consumer stands after its k-th receive, before the ack it sends then.
        let cut = c.cut(101, receives[k - 1].event + 1).unwrap();
        let t = c.traffic(&cut, 100);
        assert_eq!(
            (t[&0].sends, t.get(&1).map_or(0, |x| x.receives)),
            (k as u64, k as u64 - 1)
        );
        assert!(c.in_flight(&cut).is_empty());
        // The producer stands before it sends message k.
        let cut = c.cut(100, sends[k - 1].event).unwrap();
        let t = c.traffic(&cut, 101);
        assert_eq!(t.get(&0).map_or(0, |x| x.receives), k as u64 - 1);
        assert_eq!(cut.before(101), Some(receives[k - 1].event));
        // The producer just after its send: as late as it can be, the consumer has taken
        // message k and its ack k is in flight.
        let cut = c.cut(100, sends[k - 1].event + 1).unwrap();
        let flying = c.in_flight(&cut);
        assert_eq!(flying.len(), 1);
        assert_eq!(flying[0].channel, 1);
        assert_eq!(flying[0].units, (k as u64 - 1) * 4..k as u64 * 4);
        let t = c.traffic(&cut, 101);
        assert_eq!((t[&0].receives, t[&1].sends), (k as u64, k as u64));
    }
    // Before the fork the child has not started.
    assert_eq!(c.cut(100, 0).unwrap().before(101), Some(0));
}

/// A read that takes parts of two writes depends on both.
#[test]
fn a_receive_spanning_two_sends_is_two_messages() {
    let mut s = Sim::new(3, &[ChannelKind::Fifo]);
    let a = s.step(0, Some((0, Direction::Send, 10)));
    let b = s.step(1, Some((0, Direction::Send, 10)));
    let r = s.step(2, Some((0, Direction::Receive, 15)));
    let c = Causality::build(
        &s.links,
        &[process(100, None), process(101, None), process(102, None)],
    )
    .unwrap();
    let m: Vec<_> = c
        .messages()
        .iter()
        .map(|m| (m.send, m.receive, m.units.clone()))
        .collect();
    assert_eq!(m, vec![(a, r, 0..10), (b, r, 10..15)]);
    assert!(c.happens_before(a, r) && c.happens_before(b, r));
    assert!(!c.happens_before(a, b) && !c.happens_before(b, a));
}

#[test]
fn the_ack_protocol_inside_two_batches_of_buffered_calls() {
    // Producer 1 and consumer 2, each one event: a batch of 2N calls (the producer sends
    // message k with call 2k and reads ack k with call 2k+1; the consumer reads message k
    // with call 2k and acks it with call 2k+1). As events they would make a cycle; as
    // steps they are the protocol.
    const N: u32 = 4;
    let mut links = Links::default();
    for id in 0..2 {
        links.push(Link::Channel(Channel {
            id,
            kind: ChannelKind::Pipe,
            name: format!("c{id}"),
        }));
    }
    for pid in [1, 2] {
        links.push(Link::Turn { pid, events: 1 });
        links.push(Link::Batch(Batch {
            pid,
            event: 0,
            calls: 2 * N,
        }));
    }
    for k in 0..N {
        for (pid, call, direction, channel) in [
            (1, 2 * k, Direction::Send, 0),
            (2, 2 * k, Direction::Receive, 0),
            (2, 2 * k + 1, Direction::Send, 1),
            (1, 2 * k + 1, Direction::Receive, 1),
        ] {
            links.push(Link::Transfer(Transfer {
                pid,
                event: 0,
                direction,
                channel,
                start: u64::from(k),
                len: 1,
                call,
            }));
        }
    }
    let c = Causality::build(&links, &[process(1, None), process(2, None)]).expect("no cycle");
    assert_eq!(c.batch_calls(1, 0), Some(2 * N));
    assert_eq!(c.events(1), u64::from(2 * N));
    for k in 0..N {
        // The consumer stands after its read of message k (before its ack): the producer
        // has sent k+1 messages and read k acks, and stands before reading ack k.
        let at = c.step(
            2,
            Point {
                event: 0,
                call: 2 * k + 1,
            },
        );
        let cut = c.cut(2, at).expect("a cut");
        let producer = cut.before(1).expect("the producer");
        assert_eq!(
            c.point(1, producer),
            Point {
                event: 0,
                call: 2 * k + 1
            }
        );
        let t = c.traffic(&cut, 1);
        assert_eq!(
            (t[&0].sends, t.get(&1).map_or(0, |t| t.receives)),
            (u64::from(k) + 1, u64::from(k))
        );
        assert!(c.in_flight(&cut).is_empty());
    }
}

#[test]
fn a_vfork_parents_one_event_makes_the_child_and_is_released_by_it() {
    // Parent 1's event 1 is its vfork: the child 2 is made there, runs, and its exec (its
    // event 1) releases the parent's vfork, which returns in that same event.
    let mut links = Links::default();
    links.push(Link::Channel(Channel {
        id: 0,
        kind: ChannelKind::VforkDone,
        name: "release of vfork parent by 2".into(),
    }));
    links.push(Link::Turn { pid: 1, events: 1 });
    links.push(Link::Turn { pid: 2, events: 2 });
    links.push(Link::Turn { pid: 1, events: 2 });
    for (pid, event, direction) in [(2, 1, Direction::Send), (1, 1, Direction::Receive)] {
        links.push(Link::Transfer(Transfer {
            pid,
            event,
            direction,
            channel: 0,
            start: 0,
            len: 1,
            call: 0,
        }));
    }
    let c =
        Causality::build(&links, &[process(1, None), process(2, Some((1, 1)))]).expect("no cycle");
    let e = |pid, event| EventId { pid, event };
    assert!(c.happens_before(e(1, 0), e(2, 0)));
    assert!(c.happens_before(e(2, 1), e(1, 1)));
    assert!(!c.happens_before(e(1, 1), e(2, 0)));
}

#[test]
fn contradicting_links_are_an_error() {
    // Each receives what the other sends after that receive.
    let mut links = Links::default();
    for id in 0..2 {
        links.push(Link::Channel(Channel {
            id,
            kind: ChannelKind::Pipe,
            name: format!("c{id}"),
        }));
    }
    for (pid, event, direction, channel) in [
        (1, 0, Direction::Receive, 0),
        (1, 1, Direction::Send, 1),
        (2, 0, Direction::Receive, 1),
        (2, 1, Direction::Send, 0),
    ] {
        links.push(Link::Turn { pid, events: 1 });
        links.push(Link::Transfer(Transfer {
            pid,
            event,
            direction,
            channel,
            start: 0,
            len: 1,
            call: 0,
        }));
    }
    let err = Causality::build(&links, &[process(1, None), process(2, None)]).unwrap_err();
    assert!(err.to_string().contains("contradict"), "{err}");
}

/// Brute force: every event that `from` happens before or is (edges: program order and
/// message overlap).
fn after(s: &Sim, c: &Causality, from: EventId) -> HashSet<EventId> {
    let mut seen = HashSet::new();
    let mut todo = vec![from];
    while let Some(e) = todo.pop() {
        if !seen.insert(e) {
            continue;
        }
        let p = (e.pid - 100) as usize;
        if e.event + 1 < s.events[p] {
            todo.push(EventId {
                pid: e.pid,
                event: e.event + 1,
            });
        }
        for m in c.messages().iter().filter(|m| m.send == e) {
            todo.push(m.receive);
        }
    }
    seen
}

fn id(p: usize, event: u64) -> EventId {
    EventId {
        pid: Sim::pid(p),
        event,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random runs of 2–4 processes over byte streams: the cut around any stop is consistent
    /// (what is received was sent), the latest one (one more event of any other process
    /// would be one that the stop's next event happens before), and the clocks agree with
    /// brute force.
    #[test]
    fn cuts_are_consistent_and_latest(
        procs in 2usize..5,
        script in prop::collection::vec((0usize..4, 0u8..3, 1u64..20), 1..60),
        stop in (0usize..4, 0u64..40),
    ) {
        // Channel (i, j): process i writes, process j reads.
        let pairs: Vec<(usize, usize)> = (0..procs)
            .flat_map(|i| (0..procs).filter(move |j| *j != i).map(move |j| (i, j)))
            .collect();
        let mut s = Sim::new(procs, &vec![ChannelKind::Pipe; pairs.len()]);
        for (p, what, len) in script {
            let p = p % procs;
            let io = match what {
                0 => None,
                1 => {
                    let c = pairs.iter().position(|x| x.0 == p).unwrap() + (len as usize % (procs - 1));
                    Some((c as u32, Direction::Send, len))
                }
                _ => {
                    // Read from the channel with the most unread units, if any.
                    let c = (0..pairs.len())
                        .filter(|c| pairs[*c].1 == p)
                        .max_by_key(|c| s.sent[*c].0 - s.sent[*c].1)
                        .unwrap();
                    let unread = s.sent[c].0 - s.sent[c].1;
                    (unread > 0).then_some((c as u32, Direction::Receive, len.min(unread)))
                }
            };
            s.step(p, io);
        }
        let processes: Vec<ProcessInfo> = (0..procs).map(|p| process(Sim::pid(p), None)).collect();
        let c = Causality::build(&s.links, &processes).unwrap();
        let p = stop.0 % procs;
        let next = stop.1 % (s.events[p] + 1);
        let cut = c.cut(Sim::pid(p), next).unwrap();
        prop_assert_eq!(cut.before(Sim::pid(p)), Some(next));
        for m in c.messages() {
            prop_assert!(!cut.contains(m.receive) || cut.contains(m.send), "{:?} received, not sent", m);
        }
        if next < s.events[p] {
            let later = after(&s, &c, id(p, next));
            for q in 0..procs {
                let b = cut.before(Sim::pid(q)).unwrap();
                // Nothing in the cut is after the stop; the first event outside it is.
                for e in 0..b {
                    prop_assert!(!later.contains(&id(q, e)));
                }
                if b < s.events[q] {
                    prop_assert!(later.contains(&id(q, b)));
                }
            }
            for e in &later {
                prop_assert!(*e == id(p, next) || c.happens_before(id(p, next), *e));
            }
        }
        // The recorder's order ranks every event after those that happen before it, and
        // distinct events differently.
        let mut ranks = HashSet::new();
        for q in 0..procs {
            for e in 0..s.events[q] {
                let r = c.recorded_rank(Sim::pid(q), e).unwrap();
                prop_assert!(ranks.insert(r), "rank {} twice", r);
                for m in c.messages().iter().filter(|m| m.receive == id(q, e)) {
                    prop_assert!(c.recorded_rank(m.send.pid, m.send.event).unwrap() < r);
                }
            }
            let end = c.recorded_rank(Sim::pid(q), s.events[q]).unwrap();
            if let Some(last) = s.events[q].checked_sub(1) {
                prop_assert!(c.recorded_rank(Sim::pid(q), last).unwrap() < end);
            }
        }
    }
}

/// Processes run at the same time while recorded: the recorder may write a receive before
/// the send that fed it (it saw the reader's stop first). The order of stops across
/// processes still follows happens-before.
#[test]
fn ranks_follow_happens_before_where_the_recorders_order_does_not() {
    let mut links = Links::default();
    links.push(Link::Channel(Channel {
        id: 0,
        kind: ChannelKind::Pipe,
        name: "ack".into(),
    }));
    // The recorder wrote the producer's events 0–2 (its receive of the ack is event 1), then
    // the consumer's 0–1 (its send of the ack is event 0).
    links.push(Link::Turn { pid: 1, events: 3 });
    links.push(Link::Turn { pid: 2, events: 2 });
    for (pid, event, direction) in [(2, 0, Direction::Send), (1, 1, Direction::Receive)] {
        links.push(Link::Transfer(Transfer {
            pid,
            event,
            direction,
            channel: 0,
            start: 0,
            len: 4,
            call: 0,
        }));
    }
    let c = Causality::build(&links, &[process(1, None), process(2, None)]).unwrap();
    let rank = |pid, e| c.recorded_rank(pid, e).unwrap();
    assert!(rank(1, 0) < rank(2, 0), "the recorder's order where it can");
    assert!(rank(2, 0) < rank(1, 1), "the send before its receive");
    assert!(rank(1, 1) < rank(1, 2) && rank(1, 2) < rank(1, 3));
    assert!(rank(2, 1) < rank(2, 2));
}
