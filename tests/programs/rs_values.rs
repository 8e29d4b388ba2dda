// Values of Rust std types for print and info locals, compared with rust-gdb.
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
#[allow(dead_code)]
struct Job {
    id: u32,
    name: String,
    weights: Vec<f64>,
}

#[derive(Debug)]
#[allow(dead_code)]
enum Shape {
    Circle(f64),
    Rect { w: i32, h: i32 },
    Empty,
}

struct Pair(i32, char);

#[inline(never)]
fn inspect(job: &Job, shapes: &[Shape]) -> usize {
    let text: &str = "hello";
    let owned = String::from("owned text");
    let v: Vec<i32> = vec![1, 2, 3];
    let empty: Vec<i32> = Vec::new();
    let dq: VecDeque<i32> = (1..=3).collect();
    let mut hm: HashMap<i32, i32> = HashMap::new();
    hm.insert(1, 10);
    let mut hs: HashSet<i32> = HashSet::new();
    hs.insert(7);
    let mut bt: BTreeMap<i32, &str> = BTreeMap::new();
    bt.insert(1, "one");
    bt.insert(2, "two");
    let some: Option<i32> = Some(3);
    let none: Option<i32> = None;
    let ok: Result<i32, String> = Ok(5);
    let err: Result<i32, String> = Err(String::from("bad"));
    let boxed: Box<i32> = Box::new(8);
    let rc = Rc::new(4);
    let arc = Arc::new(Mutex::new(6));
    let cell = Cell::new(2);
    let refcell = RefCell::new(9);
    let pair = Pair(1, 'z');
    let tuple = (1, 2.5);
    let n = text.len() + owned.len() + v.len() + empty.len() + dq.len() + hm.len() + hs.len()
        + bt.len() + some.unwrap_or(0) as usize + none.unwrap_or(0) as usize
        + ok.clone().unwrap_or(0) as usize + err.clone().err().map(|e| e.len()).unwrap_or(0)
        + *boxed as usize + *rc as usize + *arc.lock().unwrap() as usize + cell.get() as usize
        + *refcell.borrow() as usize + pair.0 as usize + pair.1 as usize + tuple.0 as usize;
    println!("{} {} {}", job.name, shapes.len(), n); // stop
    n
}

fn main() {
    let job = Job { id: 1, name: String::from("batch-alpha-1"), weights: vec![0.0, 0.5] };
    let shapes = vec![Shape::Circle(1.5), Shape::Rect { w: 2, h: 3 }, Shape::Empty];
    let t = std::thread::spawn(|| 1);
    let _ = t.join();
    println!("{:?}", job);
    inspect(&job, &shapes);
}
