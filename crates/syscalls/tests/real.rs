//! Runs real syscalls in the test process and checks `writes` against the
//! bytes the kernel actually changed.
//!
//! Each syscall runs twice, on buffers filled with two different patterns
//! and surrounded by guard areas. Every changed byte must be reported, and no
//! reported range may leave the buffer. For "exact" checks, every reported
//! byte must also have changed in at least one of the two runs.

use hindsight_syscalls::{entry_state, number, writes, writes_with_entry, Memory, Written};
use std::io;

/// Reads this process's own memory.
struct SelfMem;

impl Memory for SelfMem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), io::Error> {
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: both iovecs describe valid ranges; the kernel checks `remote`.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n == buf.len() as isize {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

const GUARD: usize = 256;

fn covered(ranges: &[Written], addr: u64) -> bool {
    ranges
        .iter()
        .any(|r| addr >= r.addr && addr < r.addr + r.len as u64)
}

/// Runs `call(buf)` twice on a `len`-byte buffer (see the module docs) and
/// returns the ranges of the last run, relative to the buffer start.
fn check(
    name: &str,
    len: usize,
    exact: bool,
    call: impl FnMut(u64) -> ([u64; 6], i64),
) -> Vec<(usize, usize)> {
    check_with(name, len, exact, |_| {}, call)
}

/// Like [`check`], with a `setup(buf)` whose own stores into the buffer
/// (input structures) are not counted as kernel writes.
fn check_with(
    name: &str,
    len: usize,
    exact: bool,
    mut setup: impl FnMut(u64),
    mut call: impl FnMut(u64) -> ([u64; 6], i64),
) -> Vec<(usize, usize)> {
    let nr = number(name).unwrap();
    let mut changed = vec![false; len];
    let mut rel = Vec::new();
    for fill in [0xa5u8, 0x5a] {
        let mut area = vec![fill; GUARD + len + GUARD];
        let base = area.as_mut_ptr() as u64;
        let buf = base + GUARD as u64;
        setup(buf);
        let before = area.clone();
        let (args, result) = call(buf);
        assert!(result >= 0, "{name} failed: {result}");
        let ranges = writes(nr, &args, result, &SelfMem).unwrap();
        for r in &ranges {
            assert!(
                r.addr >= buf && r.addr + r.len as u64 <= buf + len as u64,
                "{name}: {r:?} leaves the buffer {buf:#x}+{len}"
            );
        }
        for (i, b) in area.iter().enumerate() {
            if *b != before[i] {
                let off = i as i64 - GUARD as i64;
                assert!(
                    covered(&ranges, base + i as u64),
                    "{name}: byte at offset {off} changed but is not reported"
                );
                changed[off as usize] = true;
            }
        }
        rel = ranges
            .iter()
            .map(|r| ((r.addr - buf) as usize, r.len))
            .collect();
    }
    if exact {
        for (off, l) in &rel {
            for (i, c) in changed.iter().enumerate().skip(*off).take(*l) {
                assert!(*c, "{name}: offset {i} reported but never written");
            }
        }
    }
    rel
}

fn sys(nr: i64, a: [u64; 6]) -> i64 {
    // SAFETY: the tests pass valid buffers for each syscall.
    let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) };
    if r == -1 {
        -(io::Error::last_os_error().raw_os_error().unwrap() as i64)
    } else {
        r
    }
}

fn run(nr: i64, a: [u64; 6]) -> ([u64; 6], i64) {
    (a, sys(nr, a))
}

#[test]
fn uname_is_covered_exactly() {
    let r = check("uname", 512, true, |b| {
        run(libc::SYS_uname, [b, 0, 0, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 390)]);
    assert_eq!(390, std::mem::size_of::<libc::utsname>());
}

#[test]
fn stat_family_and_fixed_structs() {
    let root = c"/".as_ptr() as u64;
    check("fstat", 144, true, |b| {
        run(libc::SYS_fstat, [1, b, 0, 0, 0, 0])
    });
    check("stat", 144, true, |b| {
        run(libc::SYS_stat, [root, b, 0, 0, 0, 0])
    });
    check("newfstatat", 144, true, |b| {
        run(
            libc::SYS_newfstatat,
            [libc::AT_FDCWD as u64, root, b, 0, 0, 0],
        )
    });
    check("statx", 256, true, |b| {
        run(
            libc::SYS_statx,
            [libc::AT_FDCWD as u64, root, 0, 0xfff, b, 0],
        )
    });
    check("statfs", 120, true, |b| {
        run(libc::SYS_statfs, [root, b, 0, 0, 0, 0])
    });
    check("sysinfo", 112, false, |b| {
        run(libc::SYS_sysinfo, [b, 0, 0, 0, 0, 0])
    });
    check("getrusage", 144, false, |b| {
        run(libc::SYS_getrusage, [0, b, 0, 0, 0, 0])
    });
    check("times", 32, true, |b| {
        run(libc::SYS_times, [b, 0, 0, 0, 0, 0])
    });
    check("clock_gettime", 16, false, |b| {
        run(
            libc::SYS_clock_gettime,
            [libc::CLOCK_MONOTONIC as u64, b, 0, 0, 0, 0],
        )
    });
    check("clock_getres", 16, false, |b| {
        run(
            libc::SYS_clock_getres,
            [libc::CLOCK_MONOTONIC as u64, b, 0, 0, 0, 0],
        )
    });
    let r = check("gettimeofday", 64, false, |b| {
        run(libc::SYS_gettimeofday, [b, b + 32, 0, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 16), (32, 8)]);
    check("getrlimit", 16, true, |b| {
        run(
            libc::SYS_getrlimit,
            [libc::RLIMIT_NOFILE as u64, b, 0, 0, 0, 0],
        )
    });
    check("prlimit64", 16, true, |b| {
        run(
            libc::SYS_prlimit64,
            [0, libc::RLIMIT_STACK as u64, 0, b, 0, 0],
        )
    });
    let r = check("getresuid", 16, false, |b| {
        run(libc::SYS_getresuid, [b, b + 4, b + 8, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 4), (4, 4), (8, 4)]);
    check("pipe2", 8, true, |b| {
        let r = run(libc::SYS_pipe2, [b, libc::O_CLOEXEC as u64, 0, 0, 0, 0]);
        // SAFETY: b holds the two new descriptors.
        unsafe {
            libc::close(*(b as *const i32));
            libc::close(*((b + 4) as *const i32));
        }
        r
    });
    check("rt_sigprocmask", 8, false, |b| {
        run(
            libc::SYS_rt_sigprocmask,
            [libc::SIG_BLOCK as u64, 0, b, 8, 0, 0],
        )
    });
    check("rt_sigaction", 32, false, |b| {
        run(
            libc::SYS_rt_sigaction,
            [libc::SIGUSR2 as u64, 0, b, 8, 0, 0],
        )
    });
    check("sigaltstack", 24, false, |b| {
        run(libc::SYS_sigaltstack, [0, b, 0, 0, 0, 0])
    });
    check("sched_getparam", 4, false, |b| {
        run(libc::SYS_sched_getparam, [0, b, 0, 0, 0, 0])
    });
    check("sched_getattr", 56, true, |b| {
        run(libc::SYS_sched_getattr, [0, b, 56, 0, 0, 0])
    });
    check("getcpu", 8, false, |b| {
        run(libc::SYS_getcpu, [b, b + 4, 0, 0, 0, 0])
    });
    check("get_robust_list", 16, true, |b| {
        run(libc::SYS_get_robust_list, [0, b, b + 8, 0, 0, 0])
    });
    check("timerfd_gettime", 32, false, |b| {
        // SAFETY: creating and closing our own timerfd.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, 0) };
        let r = run(libc::SYS_timerfd_gettime, [fd as u64, b, 0, 0, 0, 0]);
        unsafe { libc::close(fd) };
        r
    });
    // PR_GET_NAME
    check("prctl", 16, false, |b| {
        run(libc::SYS_prctl, [16, b, 0, 0, 0, 0])
    });
    // ARCH_GET_FS
    check("arch_prctl", 8, true, |b| {
        run(libc::SYS_arch_prctl, [0x1003, b, 0, 0, 0, 0])
    });
}

#[test]
fn variable_length_results() {
    let r = check("getcwd", 4096, true, |b| {
        run(libc::SYS_getcwd, [b, 4096, 0, 0, 0, 0])
    });
    assert_eq!(r.len(), 1);
    let r = check("getrandom", 64, false, |b| {
        run(libc::SYS_getrandom, [b, 64, 0, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 64)]);
    let exe = c"/proc/self/exe".as_ptr() as u64;
    check("readlink", 4096, true, |b| {
        run(libc::SYS_readlink, [exe, b, 4096, 0, 0, 0])
    });
    check("sched_getaffinity", 128, false, |b| {
        run(libc::SYS_sched_getaffinity, [0, 128, b, 0, 0, 0])
    });
    check("getdents64", 8192, false, |b| {
        // SAFETY: opening and closing our own descriptor.
        let fd = unsafe { libc::open(c"/".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
        let r = run(libc::SYS_getdents64, [fd as u64, b, 8192, 0, 0, 0]);
        unsafe { libc::close(fd) };
        r
    });
    let r = check("getgroups", 256, false, |b| {
        run(libc::SYS_getgroups, [64, b, 0, 0, 0, 0])
    });
    assert!(r.len() <= 1);
}

fn pipe() -> [i32; 2] {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    fds
}

fn put(fd: i32, data: &[u8]) {
    // SAFETY: data is valid for its length.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    assert_eq!(n, data.len() as isize);
}

fn close(fds: &[i32]) {
    for fd in fds {
        // SAFETY: closing our own descriptors.
        unsafe { libc::close(*fd) };
    }
}

#[test]
fn reads_from_pipes() {
    let data = b"hello, hindsight";
    let fds = pipe();
    let r = check("read", 64, true, |b| {
        put(fds[1], data);
        run(libc::SYS_read, [fds[0] as u64, b, 64, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, data.len())]);
    // readv into two iovecs (the array lives outside the checked buffer)
    let mut iov = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; 2];
    let iov_addr = iov.as_mut_ptr() as u64;
    let r = check("readv", 64, true, |b| {
        put(fds[1], data);
        iov[0] = libc::iovec {
            iov_base: b as *mut libc::c_void,
            iov_len: 10,
        };
        iov[1] = libc::iovec {
            iov_base: (b + 32) as *mut libc::c_void,
            iov_len: 32,
        };
        run(libc::SYS_readv, [fds[0] as u64, iov_addr, 2, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 10), (32, 6)]);
    // FIONREAD
    let r = check("ioctl", 8, false, |b| {
        put(fds[1], data);
        let r = run(libc::SYS_ioctl, [fds[0] as u64, libc::FIONREAD, b, 0, 0, 0]);
        let mut sink = [0u8; 64];
        // SAFETY: draining into a local buffer.
        unsafe { libc::read(fds[0], sink.as_mut_ptr().cast(), sink.len()) };
        r
    });
    assert_eq!(r, vec![(0, 4)]);
    // poll: revents of each pollfd
    let r = check("poll", 16, false, |b| {
        put(fds[1], data);
        // SAFETY: b has room for two pollfds.
        unsafe {
            *(b as *mut libc::pollfd) = libc::pollfd {
                fd: fds[0],
                events: libc::POLLIN,
                revents: 0,
            };
            *((b + 8) as *mut libc::pollfd) = libc::pollfd {
                fd: fds[1],
                events: libc::POLLOUT,
                revents: 0,
            };
        }
        let r = run(libc::SYS_poll, [b, 2, 0, 0, 0, 0]);
        let mut sink = [0u8; 64];
        // SAFETY: draining into a local buffer.
        unsafe { libc::read(fds[0], sink.as_mut_ptr().cast(), sink.len()) };
        r
    });
    assert_eq!(r, vec![(0, 16)]);
    // epoll_wait: one ready event of 12 bytes
    // SAFETY: creating our own epoll instance.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: 7,
    };
    // SAFETY: valid descriptors and event.
    assert_eq!(
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fds[0], &mut ev) },
        0
    );
    put(fds[1], data);
    let r = check("epoll_wait", 48, true, |b| {
        run(libc::SYS_epoll_wait, [ep as u64, b, 4, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 12)]);
    close(&[ep, fds[0], fds[1]]);
}

#[test]
fn sockets() {
    let mut sv = [0i32; 2];
    // SAFETY: sv has room for two descriptors.
    let rc = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, sv.as_mut_ptr()) };
    assert_eq!(rc, 0);
    let on: libc::c_int = 1;
    // SAFETY: valid option value.
    unsafe {
        libc::setsockopt(
            sv[1],
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&raw const on).cast(),
            4,
        )
    };
    // recvmsg with data split over two iovecs, a name buffer and a control
    // buffer for SCM_CREDENTIALS; everything lives in the checked buffer.
    let setup = |b: u64| {
        let hdr = b;
        let iov = b + 64;
        // SAFETY: all pointers are inside the checked buffer.
        unsafe {
            *(iov as *mut libc::iovec) = libc::iovec {
                iov_base: (b + 128) as *mut libc::c_void,
                iov_len: 4,
            };
            *((iov + 16) as *mut libc::iovec) = libc::iovec {
                iov_base: (b + 160) as *mut libc::c_void,
                iov_len: 64,
            };
            let mut m: libc::msghdr = std::mem::zeroed();
            m.msg_name = (b + 256) as *mut libc::c_void;
            m.msg_namelen = 128;
            m.msg_iov = iov as *mut libc::iovec;
            m.msg_iovlen = 2;
            m.msg_control = (b + 384) as *mut libc::c_void;
            m.msg_controllen = 128;
            *(hdr as *mut libc::msghdr) = m;
        }
    };
    let r = check_with("recvmsg", 512, false, setup, |b| {
        put(sv[0], b"0123456789abcdef");
        run(libc::SYS_recvmsg, [sv[1] as u64, b, 0, 0, 0, 0])
    });
    assert!(r.contains(&(128, 4)) && r.contains(&(160, 12)), "{r:?}");
    // getsockopt(SO_TYPE): the int and the length word
    // SAFETY: b + 8 is inside the checked buffer.
    let setup = |b: u64| unsafe { *((b + 8) as *mut u32) = 4 };
    let r = check_with("getsockopt", 16, false, setup, |b| {
        run(
            libc::SYS_getsockopt,
            [
                sv[0] as u64,
                libc::SOL_SOCKET as u64,
                libc::SO_TYPE as u64,
                b,
                b + 8,
                0,
            ],
        )
    });
    assert_eq!(r, vec![(8, 4), (0, 4)]);
    close(&sv);

    // getsockname on a unix socket bound to a long abstract name, into an
    // 8-byte buffer: the kernel copies 8 bytes and stores the full length.
    // SAFETY: plain socket calls on valid arguments.
    let s = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0) };
    assert!(s >= 0);
    // SAFETY: all-zero is a valid sockaddr_un.
    let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let name = format!("hindsight-syscalls-test-{}", std::process::id());
    for (i, b) in name.bytes().enumerate() {
        sun.sun_path[i + 1] = b as libc::c_char;
    }
    let sun_len = (2 + 1 + name.len()) as libc::socklen_t;
    // SAFETY: sun is a valid sockaddr_un of sun_len bytes.
    let rc = unsafe { libc::bind(s, (&raw const sun).cast(), sun_len) };
    assert_eq!(rc, 0, "{}", io::Error::last_os_error());
    let nr = number("getsockname").unwrap();
    let mut area = [0xa5u8; 256];
    let base = area.as_mut_ptr() as u64;
    let (addr, lenp) = (base + 64, base + 192);
    // SAFETY: lenp points into `area`.
    unsafe { (lenp as *mut u32).write_unaligned(8) };
    let a = [s as u64, addr, lenp, 0, 0, 0];
    let entry = entry_state(nr, &a, &SelfMem);
    assert_eq!(entry.len_at(lenp), Some(8));
    let result = sys(libc::SYS_getsockname, a);
    assert_eq!(result, 0);
    // SAFETY: lenp points into `area`.
    assert_eq!(unsafe { (lenp as *const u32).read_unaligned() }, sun_len);
    let exact = writes_with_entry(nr, &a, result, &SelfMem, &entry).unwrap();
    assert_eq!(
        exact,
        vec![Written { addr: lenp, len: 4 }, Written { addr, len: 8 }]
    );
    for (i, b) in area.iter().enumerate() {
        if *b != 0xa5 {
            assert!(covered(&exact, base + i as u64), "offset {i} changed");
        }
    }
    // without the entry snapshot, the full address length is reported
    let loose = writes(nr, &a, result, &SelfMem).unwrap();
    assert_eq!(loose[1].len, sun_len as usize);
    close(&[s]);
}

#[test]
fn wait4_on_a_child() {
    let r = check("wait4", 256, false, |b| {
        // SAFETY: the child exits immediately.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(3) };
        }
        run(libc::SYS_wait4, [pid as u64, b, 0, b + 8, 0, 0])
    });
    assert_eq!(r, vec![(0, 4), (8, 144)]);
}

#[test]
fn terminal_ioctls_on_a_pty() {
    // SAFETY: opening and setting up our own pseudo-terminal.
    let m = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
    if m < 0 {
        eprintln!("no pseudo-terminals here: skipped");
        return;
    }
    // SAFETY: m is a pty master.
    unsafe {
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
    }
    let fd = m as u64;
    let r = check("ioctl", 64, true, |b| {
        run(libc::SYS_ioctl, [fd, 0x5401, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 36)]); // TCGETS
    let r = check("ioctl", 64, true, |b| {
        run(libc::SYS_ioctl, [fd, 0x802C_542A, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 44)]); // TCGETS2
    let r = check("ioctl", 16, true, |b| {
        run(libc::SYS_ioctl, [fd, 0x5413, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 8)]); // TIOCGWINSZ
    let r = check("ioctl", 8, false, |b| {
        run(libc::SYS_ioctl, [fd, 0x8004_5430, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 4)]); // TIOCGPTN
    let r = check("ioctl", 8, false, |b| {
        run(libc::SYS_ioctl, [fd, 0x541B, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 4)]); // FIONREAD
    close(&[m]);
}

#[test]
fn fcntl_getlk() {
    let path = std::env::temp_dir().join(format!("hindsight-syscalls-lk-{}", std::process::id()));
    let f = std::fs::File::create(&path).unwrap();
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd() as u64;
    let setup = |b: u64| {
        // SAFETY: b has room for a struct flock.
        unsafe {
            let mut l: libc::flock = std::mem::zeroed();
            l.l_type = libc::F_WRLCK as i16;
            l.l_whence = libc::SEEK_SET as i16;
            *(b as *mut libc::flock) = l;
        }
    };
    let r = check_with("fcntl", 64, false, setup, |b| {
        run(libc::SYS_fcntl, [fd, libc::F_OFD_GETLK as u64, b, 0, 0, 0])
    });
    assert_eq!(r, vec![(0, 32)]);
    drop(f);
    let _ = std::fs::remove_file(path);
}
