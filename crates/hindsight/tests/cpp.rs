//! C++ as gdb 13 with libstdc++'s pretty-printers shows it: a class hierarchy, references,
//! templates, namespaces, enum classes, unions, bit fields and every standard container that
//! hindsight formats (tests/programs/cpp_values.cpp). The expected lines are gdb's own
//! (`HINDSIGHT_TESTS_UNDER_GDB=1` runs gdb on the same commands).

mod common;
use common::*;

/// Where the test program stops: every variable is alive there.
fn stop() -> String {
    format!(
        "break cpp_values.cpp:{}",
        marker_line("cpp_values.cpp", "// stop")
    )
}

#[test]
fn values_types_and_frames_as_gdb_with_libstdcxx_printers_shows_them() {
    let prog = compile_cpp("cpp_values", &[]);
    let at = stop();
    let r = debug(
        &prog,
        &[
            &at,
            "run",
            "print s",
            "print empty",
            "print v",
            "print v[3]",
            "print big[500]",
            "print bits",
            "print words",
            "print arr",
            "print dq",
            "print lst",
            "print fl",
            "print m",
            "print mm",
            "print st",
            "print ms",
            "print um",
            "print us",
            "print sp",
            "print wp",
            "print up",
            "print *up",
            "print up->y",
            "print opt",
            "print none",
            "print var",
            "print tup",
            "print at",
            "print ring",
            "print w",
            "print f",
            "print col",
            "print base",
            "print c",
            "print name",
            "print c.id_",
            "print c.count",
            "print geo::Shape::count",
            "print sizeof(v)",
            "print sizeof(c)",
            "print/r v",
            "print lock",
            "ptype c",
            "whatis c",
            "ptype geo::Shape",
            "ptype f",
            "ptype w",
            "ptype col",
            "ptype ring",
            "whatis ring",
            "whatis v",
            "whatis name",
            "whatis m",
            "whatis um",
            "backtrace",
            "info args",
            "set print pretty on",
            "print c",
            "print tup",
            "set print pretty off",
            "set print elements 4",
            "print v",
            "print s",
            "print m",
        ],
        &[],
    );
    let line = marker_line("cpp_values.cpp", "// stop");
    r.line(&format!(
        "{{*}}Breakpoint 1, inspect (c=..., name=\"circle\") at cpp_values.cpp:{line}"
    ));
    r.block(&[
        "$1 = \"circle!\"",
        "$2 = \"\"",
        "$3 = std::vector of length 5, capacity 5 = {0, 7, 14, 21, 28}",
        "$4 = 21",
        "$5 = 3500",
        "$6 = std::vector<bool> of length 4, capacity 64 = {true, false, true, true}",
        "$7 = std::vector of length 2, capacity 2 = {\"alpha\", \"beta\"}",
        "$8 = {_M_elems = {1, 2, 3}}",
        "$9 = std::deque with 3 elements = {4, 5, 6}",
        "$10 = std::__cxx11::list = {[0] = 7, [1] = 8}",
        "$11 = std::forward_list = {[0] = 9, [1] = 10}",
        "$12 = std::map with 2 elements = {[\"one\"] = 1, [\"two\"] = 2}",
        "$13 = std::multimap with 2 elements = {[1] = 97 'a', [1] = 98 'b'}",
        "$14 = std::set with 3 elements = {[0] = 1, [1] = 2, [2] = 3}",
        "$15 = std::multiset with 2 elements = {[0] = 5, [1] = 5}",
        "$16 = std::unordered_map with 1 element = {[1] = 10}",
        "$17 = std::unordered_set with 1 element = {[0] = 42}",
        "$18 = std::shared_ptr<int> (use count 1, weak count 1) = {get() = {hex}}",
        "$19 = std::weak_ptr<int> (use count 1, weak count 1) = {get() = {hex}}",
        "$20 = std::unique_ptr<geo::Point> = {get() = {hex}}",
        "$21 = {x = 3, y = 4}",
        "$22 = 4",
        "$23 = std::optional<int> = {[contained value] = 9}",
        "$24 = std::optional<int> [no contained value]",
        "$25 = std::variant<int, double> [index 1] = {2.5}",
        "$26 = std::tuple containing = {[1] = 1, [2] = 120 'x', [3] = 0.5}",
        "$27 = std::atomic<int> = { 17 }",
        "$28 = {items = {1, 2, 3}, head = 1}",
        "$29 = {i = 1065353216, f = 1, bytes = \"\\000\\000\\200?\"}",
        "$30 = {ready = 1, mode = 5, delta = -3}",
        "$31 = geo::Color::Blue",
        "$32 = (geo::Shape &) @{hex}: {_vptr.Shape = {hex} <vtable for geo::Circle+16>, static count = 2, id_ = 1, color_ = geo::Color::Green}",
        "$33 = (geo::Circle &) @{hex}: {<geo::Shape> = {_vptr.Shape = {hex} <vtable for geo::Circle+16>, static count = 2, id_ = 1, color_ = geo::Color::Green}, center = {x = 2, y = 3}, radius = 1.5}",
        "$34 = \"circle\"",
        "$35 = 1",
        "$36 = 2",
        "$37 = 2",
        "$38 = 24",
        "$39 = 32",
        "$40 = {<std::_Vector_base<int, std::allocator<int> >> = {_M_impl = {<std::allocator<int>> = {<std::__new_allocator<int>> = {<No data fields>}, <No data fields>}, <std::_Vector_base<int, std::allocator<int> >::_Vector_impl_data> = {_M_start = {hex}, _M_finish = {hex}, _M_end_of_storage = {hex}}, <No data fields>}}, <No data fields>}",
        "$41 = {_M_device = @{hex}}",
        "type = class geo::Circle : public geo::Shape {",
        "  public:",
        "    geo::Point center;",
        "    double radius;",
        "    Circle(int, geo::Point, double);",
        "    virtual double area(void) const;",
        "} &",
        "type = geo::Circle &",
        "type = class geo::Shape {",
        "  public:",
        "    static int count;",
        "  protected:",
        "    int id_;",
        "    geo::Color color_;",
        "  public:",
        "    Shape(int, geo::Color);",
        "    ~Shape(void);",
        "    virtual double area(void) const;",
        "    int id(void) const;",
        "}",
        "type = struct Flags {",
        "    unsigned int ready : 1;",
        "    unsigned int mode : 3;",
        "    int delta : 4;",
        "}",
        "type = union Word {",
        "    int i;",
        "    float f;",
        "    unsigned char bytes[4];",
        "}",
        "type = enum class geo::Color : unsigned char {geo::Color::Red, geo::Color::Green, geo::Color::Blue}",
        "type = struct geo::Ring<short, 3> [with T = short] {",
        "    T items[3];",
        "    int head;",
        "  public:",
        "    T first(void) const;",
        "}",
        "type = geo::Ring<short, 3>",
        "type = std::vector<int>",
        "type = const std::string &",
        "type = std::map<std::string, int>",
        "type = std::unordered_map<int, int>",
        "#0  inspect (c=..., name=\"circle\") at cpp_values.cpp:{n}",
        "#1  {hex} in main () at cpp_values.cpp:{n}",
        "c = @{hex}: {<geo::Shape> = {_vptr.Shape = {hex} <vtable for geo::Circle+16>, static count = 2, id_ = 1, color_ = geo::Color::Green}, center = {x = 2, y = 3}, radius = 1.5}",
        "name = \"circle\"",
        "$42 = (geo::Circle &) @{hex}: {",
        "  <geo::Shape> = {",
        "    _vptr.Shape = {hex} <vtable for geo::Circle+16>,",
        "    static count = 2,",
        "    id_ = 1,",
        "    color_ = geo::Color::Green",
        "  }, ",
        "  members of geo::Circle:",
        "  center = {",
        "    x = 2,",
        "    y = 3",
        "  },",
        "  radius = 1.5",
        "}",
        "$43 = std::tuple containing = {",
        "  [1] = 1,",
        "  [2] = 120 'x',",
        "  [3] = 0.5",
        "}",
        "$44 = std::vector of length 5, capacity 5 = {0, 7, 14, 21...}",
        "$45 = \"circ\"...",
        "$46 = std::map with 2 elements = {[\"one\"] = 1, [\"two\"] = 2...}",
    ]);
}

/// A function inlined at -O2 into a function that threads run, and also kept out of line:
/// `break` plants at both copies (gdb's "(2 locations)"), the hit names the copy, the
/// backtrace has a frame for the inlined copy, and `finish` leaves the copy.
#[test]
fn inlined_copies_are_locations_and_frames_as_in_gdb() {
    let prog = compile_cpp("cpp_inline", &["-O2"]);
    let r = debug(
        &prog,
        &[
            "break scale",
            "info breakpoints",
            "run",
            "bt 2",
            "info args",
            "up",
            "info locals",
            "print n",
            "print total",
            "break cpp_inline.cpp:10",
            "info breakpoints",
        ],
        &[],
    );
    r.line("Breakpoint 1 at {hex}: scale. (2 locations)")
        .block(&[
            "Num     Type           Disp Enb Address            What",
            "1       breakpoint     keep y   <MULTIPLE>         ",
            "1.1                         y   {hex} in scale(int) at cpp_inline.cpp:9",
            "1.2                         y   {hex} in scale at cpp_inline.cpp:9",
        ])
        .line("Thread {n} \"{*}\" hit Breakpoint 1.2, {hex} in scale (x=<optimized out>) at cpp_inline.cpp:9")
        .block(&[
            "9\t    calls++;",
            "#0  {hex} in scale (x=<optimized out>) at cpp_inline.cpp:9",
            // gdb adds `n=n@entry=10` (the value at entry, from the call site).
            "#1  work (n={*}10) at cpp_inline.cpp:16",
            "x = <optimized out>",
            "#1  work (n={*}10) at cpp_inline.cpp:16",
            "16\t        total += scale(i);",
            "i = <optimized out>",
            "total = 145",
            "$1 = 10",
            "$2 = 145",
            "Breakpoint 2 at {hex}: cpp_inline.cpp:10. (2 locations)",
        ])
        .line("2.1                         y   {hex} in scale(int) at cpp_inline.cpp:10")
        .line("2.2                         y   {hex} in work(int) at cpp_inline.cpp:10");
    // A deliberate difference: gdb 13's `finish` here runs out of every frame of the
    // machine frame (it stops in libstdc++), hindsight stops where the copy ends.
    if under_gdb() {
        return;
    }
    let r = debug(
        &prog,
        &["break scale", "run", "delete", "finish", "bt 1"],
        &[],
    );
    // Out of the inlined copy, in the function it was inlined into.
    r.line("Run till exit from #0  {hex} in scale (x=<optimized out>) at cpp_inline.cpp:9")
        .line("#0  {hex} in work (n={*}) at cpp_inline.cpp:{n}");
}
