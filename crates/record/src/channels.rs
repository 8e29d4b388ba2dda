//! Channels between recorded processes (DESIGN.md, "Multi-process"): which pipe, FIFO or
//! socket a descriptor of a recorded process is, and how many units (bytes, or datagrams)
//! went each way through each channel, so that every send and receive becomes a
//! [`Transfer`] with its place in the channel's stream (`hindsight-trace`'s `links`).
//!
//! What a descriptor is, is asked of the kernel at the syscall's exit (the thread is stopped
//! there; for a call the in-process agent buffered, when its batch is drained: the agent
//! closes no channel itself, so the descriptor still names it then): `stat` of `/proc/PID/fd/N` gives the object (a pipe and a FIFO have one inode for
//! both ends; each end of a socket has its own), the socket diagnostics netlink interface
//! gives a Unix socket's type and peer, and `/proc/net/tcp{,6}` a TCP connection's two ends.
//!
//! Invariants:
//! - The units of one channel and one direction are counted in the order the recorder sees
//!   the syscalls that moved them return. That is the order they went through the channel
//!   for one writer and one reader; with several writers (or readers) on one channel, two
//!   syscalls that returned at nearly the same moment may be counted in the other order.
//! - A socket whose other end is not a connected socket of this machine (a datagram socket
//!   that is not connected, UDP, a connection to another host) is no channel: its transfers
//!   are not written. Negative answers are forgotten at every `connect`, which may make one.
//!
//! Kernel surprises: an accepted Unix socket carries the name of the listening socket; a
//! connected datagram socket's peer is reported like a stream socket's. Until the server
//! accepts a connection, the socket at its end has no inode: the client's socket reports
//! peer 0 (Unix), and the server's end is listed with inode 0 (TCP). A client may send
//! before that: its Unix channels get provisional names (`socket:[?]` for the other end),
//! renamed in the trace once the other end is known, so that both ends' units are counted
//! on the same channels from the first byte.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use hindsight_trace::{ChannelKind, Direction, TraceError, TraceWriter, Transfer};

/// One end of a channel, as a descriptor of a recorded process is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// What kind of channel.
    pub kind: ChannelKind,
    /// The name of the channel that sends from here go into.
    pub outgoing: String,
    /// The name of the channel that receives here come out of.
    pub incoming: String,
}

/// A socket of a recorded process, as asked of the kernel once.
#[derive(Debug, Clone)]
struct Socket {
    kind: ChannelKind,
    peer: u64,
    /// A name for people: the bound path, or the TCP addresses.
    label: Option<String>,
    /// For TCP: "a -> b" of this end and of the other.
    tcp: Option<(String, String)>,
}

/// A send or receive seen at a syscall's exit, not written yet (its event's index is known
/// only when the event is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    /// Which way.
    pub direction: Direction,
    /// The channel's id.
    pub channel: u32,
    /// Units that went this way before.
    pub start: u64,
    /// Units of this transfer.
    pub len: u64,
    /// The event that names it, if known already (a send whose syscall's entry was written).
    pub event: Option<u64>,
    /// Its call's index in a batch of buffered calls (0 otherwise).
    pub call: u32,
}

impl Pending {
    /// The transfer, once its event's index is known.
    pub fn at(&self, pid: i32, event: u64) -> Transfer {
        Transfer {
            pid,
            event: self.event.unwrap_or(event),
            direction: self.direction,
            channel: self.channel,
            start: self.start,
            len: self.len,
            call: self.call,
        }
    }
}

/// The recorder's knowledge of channels.
#[derive(Default)]
pub(crate) struct Channels {
    /// The socket diagnostics netlink socket (None until first needed, or if refused).
    diag: Option<Option<OwnedFd>>,
    /// Socket inode → the socket, or None: not a channel we follow.
    sockets: HashMap<u64, Option<Socket>>,
    /// FIFO (device, inode) → its name (the first path it was seen by).
    fifos: HashMap<(u64, u64), String>,
    /// Units that went each way through each channel so far.
    counts: HashMap<(u32, Direction), u64>,
    /// Client sockets of Unix connections not accepted yet when first used → the
    /// provisional (outgoing, incoming) names their channels were listed with.
    unaccepted: HashMap<u64, (String, String)>,
    /// Channels to rename in the trace before the next is asked for: (kind, old, new).
    renames: Vec<(ChannelKind, String, String)>,
    /// While the calls of one batch of buffered calls are looked at ([`Channels::batch`]):
    /// what each descriptor was found to be. They are all looked at at once, so one look
    /// per descriptor answers for all its calls (a batch holds thousands of calls).
    batch_ends: Option<HashMap<(i32, i32), Option<Endpoint>>>,
}

/// How a data syscall moves units, by descriptor: (argument index of the descriptor, which
/// way), for the syscalls that move data through a descriptor.
fn data_fds(name: &str, args: &[u64; 6]) -> &'static [(usize, Direction)] {
    const SEND0: &[(usize, Direction)] = &[(0, Direction::Send)];
    const RECV0: &[(usize, Direction)] = &[(0, Direction::Receive)];
    // splice(in, off_in, out, …), sendfile(out, in, …).
    const SPLICE: &[(usize, Direction)] = &[(0, Direction::Receive), (2, Direction::Send)];
    const SENDFILE: &[(usize, Direction)] = &[(1, Direction::Receive), (0, Direction::Send)];
    // tee(in, out, …) copies without consuming: only its output is a send.
    const TEE: &[(usize, Direction)] = &[(1, Direction::Send)];
    const MSG_PEEK: u64 = libc::MSG_PEEK as u64;
    match name {
        "write" | "writev" | "sendto" | "sendmsg" | "sendmmsg" | "vmsplice" => SEND0,
        "read" | "readv" => RECV0,
        // A peek leaves the data where it is: the receive that takes it comes later.
        "recvfrom" if args[3] & MSG_PEEK == 0 => RECV0,
        "recvmsg" if args[2] & MSG_PEEK == 0 => RECV0,
        "recvmmsg" if args[3] & MSG_PEEK == 0 => RECV0,
        "splice" => SPLICE,
        "sendfile" => SENDFILE,
        "tee" => TEE,
        _ => &[],
    }
}

/// Whether syscall `name`'s result counts messages (else bytes).
fn counts_messages(name: &str) -> bool {
    matches!(name, "sendmmsg" | "recvmmsg")
}

impl Channels {
    /// The transfers of a data syscall of process `pid` that returned `result`; their
    /// channels are listed in the trace as they are first seen. Sends name `entry` (the index
    /// of the syscall's entry event, when it was written).
    pub(crate) fn transfers(
        &mut self,
        writer: &mut TraceWriter,
        pid: i32,
        name: &str,
        args: &[u64; 6],
        result: i64,
        entry: Option<u64>,
    ) -> Result<Vec<Pending>, TraceError> {
        if name == "connect" {
            // A socket that was no channel may be one now.
            self.sockets.retain(|_, s| s.is_some());
        }
        let fds = data_fds(name, args);
        if result <= 0 || fds.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for &(arg, direction) in fds {
            let Some(end) = self.endpoint(pid, args[arg] as i32) else {
                continue;
            };
            let len = if end.kind.counts_bytes() {
                if counts_messages(name) {
                    // Messages of a stream socket: their bytes are not in the result.
                    continue;
                }
                result as u64
            } else if counts_messages(name) {
                result as u64
            } else {
                1
            };
            for (kind, old, new) in std::mem::take(&mut self.renames) {
                writer.rename_channel(kind, &old, &new)?;
            }
            let channel_name = match direction {
                Direction::Send => &end.outgoing,
                Direction::Receive => &end.incoming,
            };
            let channel = writer.channel(end.kind, channel_name)?;
            let count = self.counts.entry((channel, direction)).or_insert(0);
            let start = *count;
            *count += len;
            out.push(Pending {
                direction,
                channel,
                start,
                len,
                event: entry.filter(|_| direction == Direction::Send),
                call: 0,
            });
        }
        Ok(out)
    }

    /// The one unit of a one-shot channel (a process's end, a vfork's release): every
    /// receive of it takes unit 0.
    pub(crate) fn one_shot(
        &mut self,
        writer: &mut TraceWriter,
        kind: ChannelKind,
        name: &str,
        direction: Direction,
    ) -> Result<Pending, TraceError> {
        let channel = writer.channel(kind, name)?;
        Ok(Pending {
            direction,
            channel,
            start: 0,
            len: 1,
            event: None,
            call: 0,
        })
    }

    /// Starts (true) or ends (false) the look at one batch of buffered calls: meanwhile a
    /// descriptor is looked at once (see `batch_ends`).
    pub(crate) fn batch(&mut self, on: bool) {
        self.batch_ends = on.then(HashMap::new);
    }

    /// What descriptor `fd` of process `pid` is, if it is an end of a channel we follow.
    pub(crate) fn endpoint(&mut self, pid: i32, fd: i32) -> Option<Endpoint> {
        if let Some(known) = self.batch_ends.as_ref().and_then(|b| b.get(&(pid, fd))) {
            return known.clone();
        }
        let end = self.look_at(pid, fd);
        if let Some(b) = self.batch_ends.as_mut() {
            b.insert((pid, fd), end.clone());
        }
        end
    }

    /// [`Channels::endpoint`], from the kernel.
    fn look_at(&mut self, pid: i32, fd: i32) -> Option<Endpoint> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let st = stat(&path)?;
        match st.st_mode & libc::S_IFMT {
            libc::S_IFIFO => {
                let link = std::fs::read_link(&path).ok()?;
                let link = link.to_string_lossy().into_owned();
                let (kind, name) = if link.starts_with("pipe:") {
                    (ChannelKind::Pipe, link)
                } else {
                    let name = self
                        .fifos
                        .entry((st.st_dev, st.st_ino))
                        .or_insert_with(|| format!("{link} (fifo:[{}])", st.st_ino))
                        .clone();
                    (ChannelKind::Fifo, name)
                };
                Some(Endpoint {
                    kind,
                    outgoing: name.clone(),
                    incoming: name,
                })
            }
            libc::S_IFSOCK => {
                let ino = st.st_ino;
                let s = self.socket(ino)?;
                let (outgoing, incoming) = match &s.tcp {
                    Some((mine, theirs)) => (mine.clone(), theirs.clone()),
                    None if s.peer == 0 => {
                        // Connected to a socket the server has not accepted yet.
                        let on = s.label.map(|l| format!(" ({l})")).unwrap_or_default();
                        let names = (
                            format!("socket:[{ino}] -> socket:[?]{on}"),
                            format!("socket:[?] -> socket:[{ino}]{on}"),
                        );
                        self.unaccepted.insert(ino, names.clone());
                        names
                    }
                    None => {
                        // Both ends must name the channel alike: by the two inodes, and the
                        // path that one of them is bound to (the lower inode's first).
                        let peer = s.peer;
                        let peer_label = self
                            .sockets
                            .get(&peer)
                            .and_then(|p| p.as_ref())
                            .and_then(|p| p.label.clone());
                        let label = if ino < peer {
                            s.label.clone().or(peer_label)
                        } else {
                            peer_label.or(s.label.clone())
                        };
                        let on = label.map(|l| format!(" ({l})")).unwrap_or_default();
                        let names = (
                            format!("socket:[{ino}] -> socket:[{peer}]{on}"),
                            format!("socket:[{peer}] -> socket:[{ino}]{on}"),
                        );
                        // A client that sent before the accept: its channels get these names.
                        if let Some((out, inc)) = self.unaccepted.remove(&ino) {
                            self.renames.push((s.kind, out, names.0.clone()));
                            self.renames.push((s.kind, inc, names.1.clone()));
                        }
                        if let Some((out, inc)) = self.unaccepted.remove(&peer) {
                            self.renames.push((s.kind, out, names.1.clone()));
                            self.renames.push((s.kind, inc, names.0.clone()));
                        }
                        names
                    }
                };
                Some(Endpoint {
                    kind: s.kind,
                    outgoing,
                    incoming,
                })
            }
            _ => None,
        }
    }

    /// Socket `ino`, asked of the kernel the first time. Its peer is learnt with it: the peer
    /// may be gone when it is first used (a client that sent and closed).
    fn socket(&mut self, ino: u64) -> Option<Socket> {
        if let Some(s) = self.sockets.get(&ino) {
            return s.clone();
        }
        let s = self.ask_socket(ino);
        // A Unix client whose server has not accepted yet is asked again next time.
        let unaccepted = s.as_ref().is_some_and(|s| s.peer == 0 && s.tcp.is_none());
        if !unaccepted {
            self.sockets.insert(ino, s.clone());
        }
        if let Some(s) = s.as_ref().filter(|s| s.peer != 0) {
            if !matches!(self.sockets.get(&s.peer), Some(Some(_))) {
                let asked = match s.kind {
                    ChannelKind::Tcp => None,
                    _ => self.ask_socket(s.peer).filter(|p| p.peer == ino),
                };
                let reverse = asked.unwrap_or_else(|| Socket {
                    kind: s.kind,
                    peer: ino,
                    label: None,
                    tcp: s.tcp.as_ref().map(|(a, b)| (b.clone(), a.clone())),
                });
                self.sockets.insert(s.peer, Some(reverse));
            }
        }
        s
    }

    /// Asks the kernel what socket `ino` is: a connected Unix socket, or one end of a TCP
    /// connection whose other end is on this machine.
    fn ask_socket(&mut self, ino: u64) -> Option<Socket> {
        if let Some(s) = self.ask_unix(ino) {
            return s;
        }
        tcp_socket(ino)
    }

    fn diag_fd(&mut self) -> Option<i32> {
        if self.diag.is_none() {
            // SAFETY: plain socket call; the descriptor is owned from here on.
            let fd = unsafe {
                libc::socket(
                    libc::AF_NETLINK,
                    libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                    libc::NETLINK_SOCK_DIAG,
                )
            };
            // SAFETY: a descriptor we just opened and nobody else owns.
            self.diag = Some((fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) }));
        }
        self.diag.as_ref()?.as_ref().map(|f| f.as_raw_fd())
    }

    /// Some(answer) when `ino` is a Unix socket (answer None: not one we follow); None when
    /// it is not a Unix socket at all.
    fn ask_unix(&mut self, ino: u64) -> Option<Option<Socket>> {
        let fd = self.diag_fd()?;
        let ino32 = u32::try_from(ino).ok()?;
        let reply = unix_diag(fd, ino32)?;
        let kind = match reply.stype as i32 {
            libc::SOCK_STREAM => ChannelKind::UnixStream,
            libc::SOCK_DGRAM => ChannelKind::UnixDatagram,
            libc::SOCK_SEQPACKET => ChannelKind::UnixSeqpacket,
            _ => return Some(None),
        };
        // Peer 0: connected to a socket not accepted yet (it has no inode): a channel all
        // the same (see the module's header).
        let connecting = reply.peer == Some(0) && kind != ChannelKind::UnixDatagram;
        Some(
            reply
                .peer
                .filter(|p| *p != 0 || connecting)
                .map(|peer| Socket {
                    kind,
                    peer: u64::from(peer),
                    label: reply.name,
                    tcp: None,
                }),
        )
    }
}

fn stat(path: &str) -> Option<libc::stat> {
    let c = std::ffi::CString::new(path).ok()?;
    // SAFETY: a valid C string and a zeroed stat buffer of the right type.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::stat(c.as_ptr(), &mut st) == 0).then_some(st)
    }
}

/// What the kernel says of a Unix socket.
struct UnixReply {
    stype: u8,
    peer: Option<u32>,
    name: Option<String>,
}

/// Asks the socket diagnostics interface about Unix socket `ino` (its type, peer and bound
/// name). None: no such Unix socket (or no answer).
fn unix_diag(fd: i32, ino: u32) -> Option<UnixReply> {
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const UDIAG_SHOW_NAME: u32 = 0x01;
    const UDIAG_SHOW_PEER: u32 = 0x04;
    const UNIX_DIAG_NAME: u16 = 0;
    const UNIX_DIAG_PEER: u16 = 2;
    const NLMSG_ERROR: u16 = 2;
    // struct nlmsghdr (16 bytes) + struct unix_diag_req (24 bytes).
    let mut req = Vec::with_capacity(40);
    req.extend_from_slice(&40u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.push(libc::AF_UNIX as u8);
    req.push(0);
    req.extend_from_slice(&0u16.to_ne_bytes());
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req.extend_from_slice(&ino.to_ne_bytes());
    req.extend_from_slice(&(UDIAG_SHOW_PEER | UDIAG_SHOW_NAME).to_ne_bytes());
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // no cookie
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    // SAFETY: sends our buffer on our netlink socket.
    let sent = unsafe { libc::send(fd, req.as_ptr().cast(), req.len(), 0) };
    if sent != req.len() as isize {
        return None;
    }
    let mut buf = vec![0u8; 8192];
    // SAFETY: receives into our buffer, bounded by its length.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    let buf = buf.get(..usize::try_from(n).ok()?)?;
    let u32_at = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let u16_at = |b: &[u8], at: usize| -> Option<u16> {
        Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
    };
    let len = u32_at(buf, 0)? as usize;
    let ty = u16_at(buf, 4)?;
    if ty == NLMSG_ERROR || ty != SOCK_DIAG_BY_FAMILY {
        return None;
    }
    let msg = buf.get(16..len.min(buf.len()))?;
    // struct unix_diag_msg: family, type, state, pad, ino (u32), cookie[2].
    let stype = *msg.get(1)?;
    if u32_at(msg, 4)? != ino {
        return None;
    }
    let mut reply = UnixReply {
        stype,
        peer: None,
        name: None,
    };
    let mut at = 16;
    while at + 4 <= msg.len() {
        let alen = u16_at(msg, at)? as usize;
        let aty = u16_at(msg, at + 2)?;
        if alen < 4 {
            break;
        }
        let data = msg.get(at + 4..at + alen)?;
        match aty {
            UNIX_DIAG_PEER => reply.peer = u32_at(data, 0),
            UNIX_DIAG_NAME => {
                // An abstract name starts with a NUL byte (shown as '@', as ss does).
                let text = String::from_utf8_lossy(data).replace('\0', "@");
                let text = text.trim_end_matches('@').to_string();
                if !text.is_empty() {
                    reply.name = Some(text);
                }
            }
            _ => {}
        }
        at += (alen + 3) & !3;
    }
    Some(reply)
}

/// A TCP socket with inode `ino` whose peer is a socket of this machine (found by its
/// addresses, swapped, in `/proc/net/tcp` or `tcp6`).
fn tcp_socket(ino: u64) -> Option<Socket> {
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        let rows: Vec<(&str, &str, u64)> = text
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                Some((*f.get(1)?, *f.get(2)?, f.get(9)?.parse().ok()?))
            })
            .collect();
        let Some(&(local, remote, _)) = rows.iter().find(|r| r.2 == ino) else {
            continue;
        };
        // The other end; inode 0 while the server has not accepted it (the names are the
        // addresses: known all the same).
        let mut ends = rows.iter().filter(|r| r.0 == remote && r.1 == local);
        let first = ends.next()?;
        let &(_, _, peer) = if first.2 == 0 {
            ends.find(|r| r.2 != 0).unwrap_or(first)
        } else {
            first
        };
        let (l, r) = (address(local)?, address(remote)?);
        return Some(Socket {
            kind: ChannelKind::Tcp,
            peer,
            label: None,
            tcp: Some((format!("{l} -> {r}"), format!("{r} -> {l}"))),
        });
    }
    None
}

/// `0100007F:1F90` (or the IPv6 form) as `127.0.0.1:8080`.
fn address(hex: &str) -> Option<String> {
    let (ip, port) = hex.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let bytes: Vec<u8> = (0..ip.len() / 2)
        .map(|i| u8::from_str_radix(ip.get(2 * i..2 * i + 2)?, 16).ok())
        .collect::<Option<_>>()?;
    // The kernel prints each 32-bit word in host (little-endian) order.
    let words: Vec<u8> = bytes
        .chunks(4)
        .flat_map(|w| w.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    match words.len() {
        4 => Some(format!(
            "{}:{port}",
            std::net::Ipv4Addr::new(words[0], words[1], words[2], words[3])
        )),
        16 => {
            let a: [u8; 16] = words.try_into().ok()?;
            Some(format!("[{}]:{port}", std::net::Ipv6Addr::from(a)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_the_kernel_prints_them() {
        assert_eq!(address("0100007F:1F90").as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(
            address("00000000000000000000000001000000:0050").as_deref(),
            Some("[::1]:80")
        );
        assert_eq!(address("zz:1"), None);
    }

    #[test]
    fn a_client_that_sends_before_the_accept_is_on_the_servers_channels() {
        use std::os::unix::net::{UnixListener, UnixStream};
        let pid = std::process::id() as i32;
        let dir = std::env::temp_dir().join(format!("hindsight-channels-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        let mut c = Channels::default();
        // Before the accept the client's peer has no inode: provisional names.
        let early = c
            .endpoint(pid, client.as_raw_fd())
            .expect("a channel already");
        assert!(early.outgoing.ends_with("-> socket:[?]"), "{early:?}");
        let (server, _) = listener.accept().unwrap();
        let s = c
            .endpoint(pid, server.as_raw_fd())
            .expect("the server's end");
        // The client's channels are renamed to the names both ends use from now on.
        assert_eq!(
            c.renames,
            vec![
                (
                    ChannelKind::UnixStream,
                    early.outgoing.clone(),
                    s.incoming.clone()
                ),
                (
                    ChannelKind::UnixStream,
                    early.incoming.clone(),
                    s.outgoing.clone()
                ),
            ]
        );
        let late = c.endpoint(pid, client.as_raw_fd()).unwrap();
        assert_eq!((late.outgoing, late.incoming), (s.incoming, s.outgoing));

        // TCP: the addresses name the channels before the accept too.
        let tl = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tc = std::net::TcpStream::connect(tl.local_addr().unwrap()).unwrap();
        let early = c
            .endpoint(pid, tc.as_raw_fd())
            .expect("a TCP channel already");
        let (ts, _) = tl.accept().unwrap();
        let s = c.endpoint(pid, ts.as_raw_fd()).expect("the server's end");
        assert_eq!((early.outgoing, early.incoming), (s.incoming, s.outgoing));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn both_ends_of_a_socketpair_and_of_a_pipe_name_one_channel_each_way() {
        let mut fds = [0; 2];
        // SAFETY: plain syscalls on arrays we own.
        unsafe {
            assert_eq!(
                libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()),
                0
            );
        }
        let pid = std::process::id() as i32;
        let mut c = Channels::default();
        let a = c.endpoint(pid, fds[0]).expect("a socket end");
        let b = c.endpoint(pid, fds[1]).expect("the other end");
        assert_eq!(a.kind, ChannelKind::UnixStream);
        assert_eq!(a.outgoing, b.incoming);
        assert_eq!(a.incoming, b.outgoing);
        assert_ne!(a.outgoing, a.incoming);
        let mut p = [0; 2];
        // SAFETY: as above.
        unsafe {
            assert_eq!(libc::pipe(p.as_mut_ptr()), 0);
        }
        let r = c.endpoint(pid, p[0]).unwrap();
        let w = c.endpoint(pid, p[1]).unwrap();
        assert_eq!(r.kind, ChannelKind::Pipe);
        assert_eq!(w.outgoing, r.incoming);
        // A regular file is no channel.
        let f = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(c.endpoint(pid, f.as_raw_fd()), None);
        // SAFETY: closing what we opened.
        unsafe {
            for fd in fds.iter().chain(p.iter()) {
                libc::close(*fd);
            }
        }
    }
}
