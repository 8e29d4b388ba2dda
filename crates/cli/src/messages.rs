//! The messages between the processes of a recording, in words: `hindsight info --messages`
//! (every channel and every matched message) and the REPL's `info messages` (where each
//! process stands in the consistent global state around the current stop, what each has
//! sent and received by then, and what is in flight across it).

use hindsight_causal::{Causality, Cut, Message, Traffic};
use hindsight_trace::{ChannelKind, Direction};

/// What a recording's links do not show, said wherever messages are listed.
pub const NOT_FOLLOWED: &str = "messages through shared memory are not followed";

/// Step `step` of process `pid` in words: `event 12`, or `event 12 (buffered call 3)` for a
/// call in a batch of buffered calls.
fn step_text(c: &Causality, pid: i32, step: u64) -> String {
    let p = c.point(pid, step);
    match c.batch_calls(pid, p.event) {
        Some(_) => format!("event {} (buffered call {})", p.event, p.call + 1),
        None => format!("event {}", p.event),
    }
}

/// A channel's kind and name, e.g. `pipe pipe:[1234]`.
fn channel_text(c: &Causality, id: u32) -> String {
    match c.channel(id) {
        Some(ch) => format!("{} {}", ch.kind.name(), ch.name),
        None => format!("channel {id}"),
    }
}

/// `N bytes` or `N datagrams`, as the channel counts.
fn units_text(c: &Causality, id: u32, n: u64) -> String {
    let kind = c.channel(id).map(|ch| ch.kind);
    let unit = match kind {
        Some(k) if k.counts_bytes() => "byte",
        Some(ChannelKind::UnixSeqpacket) => "packet",
        Some(ChannelKind::Exit) | Some(ChannelKind::VforkDone) => return String::new(),
        _ => "datagram",
    };
    format!(" ({n} {unit}{})", if n == 1 { "" } else { "s" })
}

fn message_line(c: &Causality, m: &Message) -> String {
    let units = match c.channel(m.channel).map(|ch| ch.kind) {
        Some(ChannelKind::Exit) | Some(ChannelKind::VforkDone) => String::new(),
        Some(k) if k.counts_bytes() => format!(" bytes {}..{}", m.units.start, m.units.end),
        _ => format!(" units {}..{}", m.units.start, m.units.end),
    };
    format!(
        "  channel {}{units}: process {} {} -> process {} {}",
        m.channel,
        m.send.pid,
        step_text(c, m.send.pid, m.send.event),
        m.receive.pid,
        step_text(c, m.receive.pid, m.receive.event)
    )
}

/// Every channel and every matched message of a recording (`hindsight info --messages`).
pub fn listing(c: &Causality) -> Vec<String> {
    let mut out = vec![format!(
        "Channels:   {} between the recorded processes ({NOT_FOLLOWED})",
        c.channels().len()
    )];
    for ch in c.channels() {
        out.push(format!("  channel {}: {}", ch.id, channel_text(c, ch.id)));
    }
    out.push(format!("Messages:   {}", c.messages().len()));
    out.extend(c.messages().iter().map(|m| message_line(c, m)));
    // Transfers with no peer: data from or to a process that was not recorded (a shell's
    // pipe), or never read.
    let unmatched: Vec<String> = c
        .transfers()
        .iter()
        // The end of a process that nobody recorded waited for (the first one's, told to
        // whoever started the recording) is no news.
        .filter(|t| {
            !c.channel(t.channel)
                .is_some_and(|ch| ch.kind == ChannelKind::Exit && t.direction == Direction::Send)
        })
        .filter(|t| {
            !c.messages().iter().any(|m| {
                m.channel == t.channel
                    && match t.direction {
                        Direction::Send => m.send.pid == t.pid && m.send.event == t.event,
                        Direction::Receive => m.receive.pid == t.pid && m.receive.event == t.event,
                    }
            })
        })
        .map(|t| {
            let what = match t.direction {
                Direction::Send => "sent, never received by a recorded process",
                Direction::Receive => "received from outside the recording",
            };
            format!(
                "  channel {}: process {} {}: {what}{}",
                t.channel,
                t.pid,
                step_text(c, t.pid, t.event),
                units_text(c, t.channel, t.len)
            )
        })
        .collect();
    if !unmatched.is_empty() {
        out.push(format!("Unmatched:  {}", unmatched.len()));
        out.extend(unmatched);
    }
    out
}

/// One process's sends and receives, per channel, e.g. `sent 3 (24 bytes) on pipe
/// pipe:[12]; received 2 (8 bytes) on pipe pipe:[13]`.
fn traffic_text(c: &Causality, traffic: &std::collections::BTreeMap<u32, Traffic>) -> String {
    let mut parts = Vec::new();
    for (id, t) in traffic {
        if t.sends > 0 {
            parts.push(format!(
                "sent {}{} on {}",
                t.sends,
                units_text(c, *id, t.units_sent),
                channel_text(c, *id)
            ));
        }
        if t.receives > 0 {
            parts.push(format!(
                "received {}{} on {}",
                t.receives,
                units_text(c, *id, t.units_received),
                channel_text(c, *id)
            ));
        }
    }
    if parts.is_empty() {
        "nothing sent or received".to_string()
    } else {
        parts.join("; ")
    }
}

/// The consistent global state `cut` around a stop of process `stopped` (`info messages`).
pub fn at_cut(c: &Causality, cut: &Cut, stopped: i32) -> Vec<String> {
    let mut out = vec![format!(
        "Consistent state of {} processes around the stop of process {stopped} ({NOT_FOLLOWED}):",
        c.pids().len()
    )];
    for (pid, before) in &cut.frontier {
        let steps = c.events(*pid);
        let total = c.point(*pid, steps).event;
        let p = c.point(*pid, *before);
        let place = if *before >= steps {
            format!("at its end ({total} events)")
        } else {
            match c.batch_calls(*pid, p.event) {
                Some(n) if p.call > 0 => format!(
                    "before event {} of {total}, after {} of its {n} buffered calls",
                    p.event, p.call
                ),
                _ => format!("before event {} of {total}", p.event),
            }
        };
        let who = if *pid == stopped {
            " (stopped here)"
        } else {
            ""
        };
        out.push(format!(
            "  process {pid}{who}: {place}: {}",
            traffic_text(c, &c.traffic(cut, *pid))
        ));
    }
    let flying = c.in_flight(cut);
    if flying.is_empty() {
        out.push("Messages in flight: none".to_string());
    } else {
        out.push(format!("Messages in flight: {}", flying.len()));
        out.extend(flying.iter().map(|m| message_line(c, m)));
    }
    out
}
