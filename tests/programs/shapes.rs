// A Rust program for the debugger: a struct passed by reference, an i32, a bool.
struct Rect {
    width: i32,
    height: i32,
    filled: bool,
}

#[inline(never)]
fn area(r: &Rect, scale: i32) -> i32 {
    let big = r.width * r.height > 20;
    let result = r.width * r.height * scale;
    if big {
        println!("big rect");
    }
    result
}

fn main() {
    eprintln!("pid {}", std::process::id());
    let r = Rect { width: 6, height: -7, filled: true };
    let total = area(&r, 3);
    let neg: i64 = -40;
    println!("area {} {} {}", total, neg, r.filled);
}
