//! The engine against real programs: many threads through one breakpoint, breakpoints removed
//! while hits are pending, and the program's own int3.

use std::path::{Path, PathBuf};
use std::process::Command;

use hindsight_control::{Inferior, Notification, Resume, StepOverMode, StopEvent, StopHook};
use hindsight_ptrace::Tid;

/// `waitpid(-1)` reaps any child of the test process: one inferior at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn build(name: &str, src: &str) -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = ROOT.get_or_init(|| process_dir("hs-control")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    let st = Command::new("gcc")
        .args(["-g", "-O0", "-no-pie", "-pthread", "-o"])
        .arg(&exe)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success());
    exe
}

fn symbol(exe: &Path, name: &str) -> u64 {
    let out = Command::new("nm").arg(exe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() == 3 && parts[2] == name {
            return u64::from_str_radix(parts[0], 16).unwrap();
        }
    }
    panic!("no symbol {name}");
}

/// Counts hits per thread; stops on the first hit when `stop_first`.
#[derive(Default)]
struct Counter {
    hits: u64,
    stop_first: bool,
    threads_seen: u32,
}

impl StopHook for Counter {
    fn breakpoint_hit(&mut self, _: &Inferior, _: Tid, _: u64) -> bool {
        self.hits += 1;
        self.stop_first && self.hits == 1
    }
    fn watchpoint_hit(&mut self, _: &Inferior, _: Tid, _: u8) -> bool {
        true
    }
    fn notify(&mut self, note: Notification) {
        if let Notification::NewThread { .. } = note {
            self.threads_seen += 1;
        }
    }
}

const RACE: &str = r#"
#include <pthread.h>
#include <stdio.h>
#define THREADS 4
#define CALLS 3000
volatile long total;
long __attribute__((noinline)) f(long x) { return x * 2 + 1; }
void *worker(void *arg) {
    long sum = 0;
    for (int i = 0; i < CALLS; i++) sum += f(i);
    __atomic_add_fetch(&total, sum, __ATOMIC_SEQ_CST);
    return 0;
}
int main(void) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    printf("total %ld\n", total);
    return total == THREADS * (long)CALLS * CALLS ? 0 : 1;
}
"#;

fn run_race(mode: StepOverMode) -> (u64, StopEvent, u32, hindsight_control::StepOverStats) {
    let _one = lock();
    let exe = build(&format!("race{mode:?}"), RACE);
    let f = symbol(&exe, "f");
    let mut inf = Inferior::spawn(&exe, &[], true).unwrap();
    inf.set_step_over_mode(mode);
    inf.insert_site(f).unwrap();
    let mut hook = Counter::default();
    let end = inf.resume(Resume::Continue, &mut hook).unwrap();
    (hook.hits, end, hook.threads_seen, inf.stats)
}

#[test]
fn every_call_is_one_hit_displaced() {
    let (hits, end, threads, stats) = run_race(StepOverMode::Displaced);
    assert_eq!(end, StopEvent::Exited(0));
    assert_eq!(hits, 4 * 3000);
    assert_eq!(threads, 4);
    // `f` starts with `push rbp`: every step-over ran the relocated copy.
    assert_eq!((stats.displaced, stats.inline), (4 * 3000, 0));
}

#[test]
fn every_call_is_one_hit_noswitch() {
    let (hits, end, _, stats) = run_race(StepOverMode::NoSwitch);
    assert_eq!(end, StopEvent::Exited(0));
    assert_eq!(hits, 4 * 3000);
    assert_eq!((stats.displaced, stats.inline), (0, 4 * 3000));
}

#[test]
fn deleting_at_first_stop_leaves_only_zombies() {
    let _one = lock();
    let exe = build("zombie", RACE);
    let f = symbol(&exe, "f");
    let mut inf = Inferior::spawn(&exe, &[], true).unwrap();
    inf.insert_site(f).unwrap();
    let mut hook = Counter {
        stop_first: true,
        ..Counter::default()
    };
    let first = inf.resume(Resume::Continue, &mut hook).unwrap();
    assert!(matches!(first, StopEvent::Breakpoint { addr, .. } if addr == f));
    inf.remove_site(f).unwrap();
    let end = inf.resume(Resume::Continue, &mut hook).unwrap();
    assert_eq!(
        end,
        StopEvent::Exited(0),
        "pending hits must be zombies, not SIGTRAPs"
    );
}

#[test]
fn programs_own_int3_reaches_its_handler() {
    let _one = lock();
    let exe = build(
        "ownint3",
        r#"
#include <signal.h>
#include <stdio.h>
#include <string.h>
volatile int handled;
void on_trap(int s) { handled++; }
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_trap;
    sigaction(SIGTRAP, &sa, 0);
    __asm__ volatile("int3");
    printf("handled %d\n", handled);
    return handled == 1 ? 0 : 2;
}
"#,
    );
    let mut inf = Inferior::spawn(&exe, &[], true).unwrap();
    let mut hook = Counter::default();
    let stop = inf.resume(Resume::Continue, &mut hook).unwrap();
    assert!(
        matches!(
            stop,
            StopEvent::Signal {
                signal: libc::SIGTRAP,
                ..
            }
        ),
        "{stop:?}"
    );
    let end = inf.resume(Resume::Continue, &mut hook).unwrap();
    assert_eq!(end, StopEvent::Exited(0));
}

/// Stops on every watchpoint trap and remembers the slots.
#[derive(Default)]
struct WatchCounter {
    fired: Vec<u8>,
}

impl StopHook for WatchCounter {
    fn breakpoint_hit(&mut self, _: &Inferior, _: Tid, _: u64) -> bool {
        true
    }
    fn watchpoint_hit(&mut self, _: &Inferior, _: Tid, slots: u8) -> bool {
        self.fired.push(slots);
        true
    }
    fn notify(&mut self, _: Notification) {}
}

#[test]
fn debug_register_watchpoint_fires_in_every_thread() {
    let _one = lock();
    let exe = build(
        "watch",
        r#"
#include <pthread.h>
#include <stdio.h>
volatile int g;
void *worker(void *a) { g = 2; return 0; }
int main(void) {
    g = 1;
    pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0);
    g = 3;
    printf("%d\n", g);
    return 0;
}
"#,
    );
    let g = symbol(&exe, "g");
    let mut inf = Inferior::spawn(&exe, &[], true).unwrap();
    // DR0 = &g, 4 bytes, break on write: L0 | RW0=01 | LEN0=11.
    inf.set_debug_registers(hindsight_control::DebugRegs {
        addr: [g, 0, 0, 0],
        dr7: 1 | (1 << 16) | (3 << 18),
    })
    .unwrap();
    let mut hook = WatchCounter::default();
    let mut values = Vec::new();
    loop {
        match inf.resume(Resume::Continue, &mut hook).unwrap() {
            StopEvent::Watchpoint { slots, .. } => {
                assert_eq!(slots, 1);
                let mut b = [0u8; 4];
                inf.read_memory(g, &mut b).unwrap();
                values.push(i32::from_le_bytes(b));
            }
            StopEvent::Exited(0) => break,
            other => panic!("unexpected stop {other:?}"),
        }
    }
    assert_eq!(
        values,
        vec![1, 2, 3],
        "the write in the new thread must be seen too"
    );
}

/// The per-process scratch directory `PREFIX-PID` under the system's temporary directory,
/// created on first use after removing those of test processes that are gone (each holds
/// compiled programs and recordings: hundreds of MB left behind by every test binary).
fn process_dir(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .and_then(|n| n.strip_prefix('-'))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = tmp.join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}
