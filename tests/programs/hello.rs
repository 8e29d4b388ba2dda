// A small Rust program for the debugger: a struct, a function, primitives.
struct Point {
    x: i32,
    y: i32,
}

#[inline(never)]
fn scale(p: &Point, k: i32) -> i32 {
    let sum = p.x * k + p.y * k;
    let flag = sum > 10;
    let letter = 'z';
    let ratio = 0.5f64;
    if flag {
        println!("big {sum} {letter} {ratio}");
    }
    sum
}

fn main() {
    let origin = Point { x: 3, y: 4 };
    let total = scale(&origin, 2);
    println!("total = {total}");
}
