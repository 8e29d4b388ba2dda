//! Register sets of a stopped thread.

use std::fmt;

/// The general-purpose registers (`struct user_regs_struct`).
#[derive(Clone, Copy)]
pub struct Regs(pub libc::user_regs_struct);

impl fmt::Debug for Regs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Regs {{ rip: {:#x}, rsp: {:#x} }}",
            self.0.rip, self.0.rsp
        )
    }
}

/// Register names in the order gdb's `info registers` lists them.
pub const GDB_ORDER: [&str; 24] = [
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs",
];

/// Number of 8-byte words in `user_regs_struct`.
pub const REG_WORDS: usize = 27;
const _: () = assert!(std::mem::size_of::<libc::user_regs_struct>() == REG_WORDS * 8);

impl Regs {
    /// The registers as the kernel lays them out: 27 words from r15 to gs.
    pub fn to_words(&self) -> [u64; REG_WORDS] {
        // SAFETY: user_regs_struct is exactly 27 u64 fields (checked above), no padding.
        unsafe { std::mem::transmute::<libc::user_regs_struct, [u64; REG_WORDS]>(self.0) }
    }

    /// The inverse of [`Regs::to_words`].
    pub fn from_words(words: &[u64; REG_WORDS]) -> Regs {
        // SAFETY: as above; every bit pattern is a valid u64.
        Regs(unsafe { std::mem::transmute::<[u64; REG_WORDS], libc::user_regs_struct>(*words) })
    }

    /// The six syscall argument registers (rdi, rsi, rdx, r10, r8, r9), as the syscall
    /// instruction passes them.
    pub fn syscall_args(&self) -> [u64; 6] {
        let r = &self.0;
        [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9]
    }

    /// Sets the six syscall argument registers.
    pub fn set_syscall_args(&mut self, args: [u64; 6]) {
        let r = &mut self.0;
        [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9] = args;
    }

    /// The program counter.
    pub fn pc(&self) -> u64 {
        self.0.rip
    }

    /// Sets the program counter.
    pub fn set_pc(&mut self, pc: u64) {
        self.0.rip = pc;
    }

    /// The stack pointer.
    pub fn sp(&self) -> u64 {
        self.0.rsp
    }

    /// A register by its gdb name (`rax`, `eax`, `pc`, `sp`, `fp`, `fs_base`, `orig_rax`…).
    /// 32-bit names give the low half.
    pub fn by_name(&self, name: &str) -> Option<u64> {
        let r = &self.0;
        let v = match name {
            "rax" => r.rax,
            "rbx" => r.rbx,
            "rcx" => r.rcx,
            "rdx" => r.rdx,
            "rsi" => r.rsi,
            "rdi" => r.rdi,
            "rbp" | "fp" => r.rbp,
            "rsp" | "sp" => r.rsp,
            "r8" => r.r8,
            "r9" => r.r9,
            "r10" => r.r10,
            "r11" => r.r11,
            "r12" => r.r12,
            "r13" => r.r13,
            "r14" => r.r14,
            "r15" => r.r15,
            "rip" | "pc" => r.rip,
            "eflags" => r.eflags,
            "cs" => r.cs,
            "ss" => r.ss,
            "ds" => r.ds,
            "es" => r.es,
            "fs" => r.fs,
            "gs" => r.gs,
            "fs_base" => r.fs_base,
            "gs_base" => r.gs_base,
            "orig_rax" => r.orig_rax,
            _ => {
                let wide = match name {
                    "eax" => "rax",
                    "ebx" => "rbx",
                    "ecx" => "rcx",
                    "edx" => "rdx",
                    "esi" => "rsi",
                    "edi" => "rdi",
                    "ebp" => "rbp",
                    "esp" => "rsp",
                    _ => return None,
                };
                return self.by_name(wide).map(|v| v & 0xffff_ffff);
            }
        };
        Some(v)
    }

    /// The registers in DWARF numbering (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
    /// 8–15 r8–r15, 16 rip).
    pub fn dwarf(&self) -> [u64; 17] {
        let r = &self.0;
        [
            r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8, r.r9, r.r10, r.r11,
            r.r12, r.r13, r.r14, r.r15, r.rip,
        ]
    }
}

/// The x87/SSE registers (`struct user_fpregs_struct`).
#[derive(Clone, Copy)]
pub struct FpRegs(pub libc::user_fpregs_struct);

impl FpRegs {
    /// The low 64 bits of xmm`n` (where a `double` is returned).
    pub fn xmm_low(&self, n: usize) -> u64 {
        let w = &self.0.xmm_space;
        let i = n * 4;
        if i + 1 >= w.len() {
            return 0;
        }
        (w[i] as u64) | ((w[i + 1] as u64) << 32)
    }
}
