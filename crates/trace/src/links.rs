//! The links between the processes of a recording (DESIGN.md, "Multi-process"): the order in
//! which the recorder wrote the events of every process (one total order of the whole
//! recording), and the channels and transfers between processes — what one process sent on a
//! pipe, a FIFO, a socket, and what another received from it; a child's end and the wait
//! that reaped it; a vfork child's exec or end, which lets its parent go on.
//!
//! The `links` file is a stream of [`Link`] records in frames, like an event stream. It is
//! written by the recorder and read whole by whoever matches messages (`hindsight-causal`).
//!
//! Invariants:
//! - The turns, concatenated, list every event of every process once, in the order the
//!   recorder wrote them: the k-th event of process P is the k-th event the turns give P.
//!   Two consecutive turns of the same process are one run.
//! - A channel is listed before the first transfer that names it. A later channel record
//!   with an id already listed renames that channel (a Unix connection sends before the
//!   server has accepted it: its channels get their final names, the server's socket
//!   among them, once that socket exists).
//! - The transfers of one channel and one direction are written in the order their units
//!   (bytes of a byte stream, datagrams of a datagram socket, the one unit of an exit) went
//!   through the channel: `start` is the number of units that went that way before.
//! - A transfer names the event of its process where it is known to have happened: a send
//!   the event where its syscall began (the units may be read from then on), a receive the
//!   event where its syscall returned (the units were there by then). A call that the
//!   in-process agent buffered is named by its batch (an `Event::Buffered`) and its index
//!   in it; such a batch is listed ([`Link::Batch`], with its number of calls) before the
//!   first transfer that names it.

use crate::encode::{Dec, DecodeError, Enc};

/// What a channel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    /// An anonymous pipe (both ends share the pipe's inode).
    Pipe,
    /// A named pipe (a FIFO in the file system).
    Fifo,
    /// One direction of a connected Unix stream socket.
    UnixStream,
    /// One direction of a connected Unix datagram socket: units are datagrams.
    UnixDatagram,
    /// One direction of a connected Unix seqpacket socket: units are packets.
    UnixSeqpacket,
    /// One direction of a TCP connection between two recorded processes (loopback).
    Tcp,
    /// A process's end, told to the parent that waits for it (one unit).
    Exit,
    /// A vfork child's exec or end, which lets its parent return from vfork (one unit).
    VforkDone,
}

impl ChannelKind {
    fn tag(self) -> u64 {
        match self {
            ChannelKind::Pipe => 0,
            ChannelKind::Fifo => 1,
            ChannelKind::UnixStream => 2,
            ChannelKind::UnixDatagram => 3,
            ChannelKind::UnixSeqpacket => 4,
            ChannelKind::Tcp => 5,
            ChannelKind::Exit => 6,
            ChannelKind::VforkDone => 7,
        }
    }

    fn from_tag(t: u64) -> Option<ChannelKind> {
        Some(match t {
            0 => ChannelKind::Pipe,
            1 => ChannelKind::Fifo,
            2 => ChannelKind::UnixStream,
            3 => ChannelKind::UnixDatagram,
            4 => ChannelKind::UnixSeqpacket,
            5 => ChannelKind::Tcp,
            6 => ChannelKind::Exit,
            7 => ChannelKind::VforkDone,
            _ => return None,
        })
    }

    /// Whether its units are bytes (else whole datagrams, packets or ends).
    pub fn counts_bytes(self) -> bool {
        matches!(
            self,
            ChannelKind::Pipe | ChannelKind::Fifo | ChannelKind::UnixStream | ChannelKind::Tcp
        )
    }

    /// A short name ("pipe", "unix socket"…).
    pub fn name(self) -> &'static str {
        match self {
            ChannelKind::Pipe => "pipe",
            ChannelKind::Fifo => "fifo",
            ChannelKind::UnixStream => "unix stream socket",
            ChannelKind::UnixDatagram => "unix datagram socket",
            ChannelKind::UnixSeqpacket => "unix seqpacket socket",
            ChannelKind::Tcp => "tcp connection",
            ChannelKind::Exit => "exit status",
            ChannelKind::VforkDone => "vfork release",
        }
    }
}

/// One direction of a channel between processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Its number in the trace (from 0, in the order channels were seen).
    pub id: u32,
    /// What it is.
    pub kind: ChannelKind,
    /// What the kernel calls it ("pipe:[1234]", "/tmp/fifo", "socket:[56] -> socket:[57]",
    /// "127.0.0.1:40000 -> 127.0.0.1:5000", "exit of 1234").
    pub name: String,
}

/// Which way a transfer went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Units went into the channel.
    Send,
    /// Units came out of it.
    Receive,
}

/// Units that one syscall of one process sent into a channel or received from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// Recorded pid of the process.
    pub pid: i32,
    /// Index of the event in its stream (see the module's invariants).
    pub event: u64,
    /// Which way.
    pub direction: Direction,
    /// The channel's id.
    pub channel: u32,
    /// Units that went this way through the channel before.
    pub start: u64,
    /// Units of this transfer (at least 1).
    pub len: u64,
    /// When `event` is a batch of buffered calls (listed by a [`Link::Batch`]): the index
    /// of the call in it; else 0.
    pub call: u32,
}

/// A batch of calls that the in-process agent buffered (one `Event::Buffered`), some of
/// which moved data between processes: every call of it is a moment of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Recorded pid.
    pub pid: i32,
    /// Index of its event in the process's stream.
    pub event: u64,
    /// How many calls it holds (at least 1).
    pub calls: u32,
}

/// One record of the `links` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// The recorder wrote `events` events of process `pid`, one after the other.
    Turn {
        /// Recorded pid.
        pid: i32,
        /// How many.
        events: u64,
    },
    /// A channel, first seen.
    Channel(Channel),
    /// A send or a receive.
    Transfer(Transfer),
    /// A batch of buffered calls that transfers name.
    Batch(Batch),
}

impl Link {
    /// Appends the record's encoding.
    pub fn encode(&self, e: &mut Enc) {
        match self {
            Link::Turn { pid, events } => {
                e.u64(0);
                e.i64(i64::from(*pid));
                e.u64(*events);
            }
            Link::Channel(c) => {
                e.u64(1);
                e.u64(u64::from(c.id));
                e.u64(c.kind.tag());
                e.bytes(c.name.as_bytes());
            }
            Link::Transfer(t) => {
                // A call in a batch: record 3 (record 2, without it, is what traces made
                // before batches were followed hold).
                e.u64(if t.call == 0 { 2 } else { 3 });
                e.i64(i64::from(t.pid));
                e.u64(t.event);
                e.u64(match t.direction {
                    Direction::Send => 0,
                    Direction::Receive => 1,
                });
                e.u64(u64::from(t.channel));
                e.u64(t.start);
                e.u64(t.len);
                if t.call != 0 {
                    e.u64(u64::from(t.call));
                }
            }
            Link::Batch(b) => {
                e.u64(4);
                e.i64(i64::from(b.pid));
                e.u64(b.event);
                e.u64(u64::from(b.calls));
            }
        }
    }

    /// Decodes one record.
    pub fn decode(d: &mut Dec<'_>) -> Result<Link, DecodeError> {
        let bad = |what: &str| DecodeError(what.to_string());
        let pid = |d: &mut Dec<'_>| -> Result<i32, DecodeError> {
            i32::try_from(d.i64()?).map_err(|_| bad("pid out of range"))
        };
        let id = |d: &mut Dec<'_>| -> Result<u32, DecodeError> {
            u32::try_from(d.u64()?).map_err(|_| bad("channel id out of range"))
        };
        Ok(match d.u64()? {
            0 => Link::Turn {
                pid: pid(d)?,
                events: d.u64()?,
            },
            1 => {
                let id = id(d)?;
                let kind =
                    ChannelKind::from_tag(d.u64()?).ok_or_else(|| bad("unknown channel kind"))?;
                let name =
                    String::from_utf8(d.bytes()?).map_err(|_| bad("channel name is not text"))?;
                Link::Channel(Channel { id, kind, name })
            }
            tag @ (2 | 3) => {
                let pid = pid(d)?;
                let event = d.u64()?;
                let direction = match d.u64()? {
                    0 => Direction::Send,
                    1 => Direction::Receive,
                    _ => return Err(bad("unknown direction")),
                };
                let channel = id(d)?;
                let start = d.u64()?;
                let len = d.u64()?;
                if len == 0 || start.checked_add(len).is_none() {
                    return Err(bad("empty or overflowing transfer"));
                }
                let call = match tag {
                    3 => u32::try_from(d.u64()?).map_err(|_| bad("call index out of range"))?,
                    _ => 0,
                };
                Link::Transfer(Transfer {
                    pid,
                    event,
                    direction,
                    channel,
                    start,
                    len,
                    call,
                })
            }
            4 => {
                let pid = pid(d)?;
                let event = d.u64()?;
                let calls = u32::try_from(d.u64()?)
                    .ok()
                    .filter(|c| *c > 0)
                    .ok_or_else(|| bad("a batch of no calls"))?;
                Link::Batch(Batch { pid, event, calls })
            }
            _ => return Err(bad("unknown link record")),
        })
    }
}

/// Everything the `links` file of a trace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The recorder's order of events: (pid, how many of its events in a row).
    pub turns: Vec<(i32, u64)>,
    /// Channels by id (index = id).
    pub channels: Vec<Channel>,
    /// Sends and receives, in the order they were written.
    pub transfers: Vec<Transfer>,
    /// Batches of buffered calls that transfers name, in the order they were written.
    pub batches: Vec<Batch>,
}

impl Links {
    /// Adds a record (consecutive turns of one process merge).
    pub fn push(&mut self, link: Link) {
        match link {
            Link::Turn { pid, events } => match self.turns.last_mut() {
                Some((p, n)) if *p == pid => *n += events,
                _ => self.turns.push((pid, events)),
            },
            Link::Channel(c) => match self.channels.get_mut(c.id as usize) {
                Some(known) if known.id == c.id => known.name = c.name,
                _ => self.channels.push(c),
            },
            Link::Transfer(t) => self.transfers.push(t),
            Link::Batch(b) => self.batches.push(b),
        }
    }

    /// Channel `id`.
    pub fn channel(&self, id: u32) -> Option<&Channel> {
        self.channels.get(id as usize).filter(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let links = [
            Link::Turn {
                pid: 12,
                events: 300,
            },
            Link::Channel(Channel {
                id: 0,
                kind: ChannelKind::UnixStream,
                name: "socket:[5] -> socket:[6]".into(),
            }),
            Link::Transfer(Transfer {
                pid: 13,
                event: 7,
                direction: Direction::Receive,
                channel: 0,
                start: 4096,
                len: 10,
                call: 0,
            }),
            Link::Batch(Batch {
                pid: 13,
                event: 9,
                calls: 40,
            }),
            Link::Transfer(Transfer {
                pid: 13,
                event: 9,
                direction: Direction::Send,
                channel: 0,
                start: 0,
                len: 3,
                call: 17,
            }),
        ];
        let mut e = Enc::default();
        for l in &links {
            l.encode(&mut e);
        }
        let mut d = Dec::new(&e.0);
        for l in &links {
            assert_eq!(&Link::decode(&mut d).unwrap(), l);
        }
        assert!(d.done());
    }

    #[test]
    fn a_channel_record_with_a_listed_id_renames_it() {
        let mut links = Links::default();
        for name in ["socket:[5] -> socket:[?]", "socket:[5] -> socket:[6] (/s)"] {
            links.push(Link::Channel(Channel {
                id: 0,
                kind: ChannelKind::UnixStream,
                name: name.into(),
            }));
        }
        assert_eq!(links.channels.len(), 1);
        assert_eq!(
            links.channel(0).map(|c| c.name.as_str()),
            Some("socket:[5] -> socket:[6] (/s)")
        );
    }

    #[test]
    fn bad_records_are_refused() {
        // An empty transfer, an unknown kind, an unknown record.
        for bytes in [vec![2, 2, 0, 0, 0, 0, 0], vec![1, 0, 9, 0], vec![7]] {
            assert!(Link::decode(&mut Dec::new(&bytes)).is_err(), "{bytes:?}");
        }
    }

    #[test]
    fn turns_of_one_process_merge() {
        let mut l = Links::default();
        l.push(Link::Turn { pid: 1, events: 2 });
        l.push(Link::Turn { pid: 1, events: 3 });
        l.push(Link::Turn { pid: 2, events: 1 });
        assert_eq!(l.turns, vec![(1, 5), (2, 1)]);
    }
}
