// Values of C++ types for print, ptype, whatis and info locals, compared with gdb 13 and
// libstdc++'s pretty-printers: a class hierarchy, references, templates, namespaces,
// enum classes, unions, bit fields and every standard container hindsight formats.
#include <array>
#include <atomic>
#include <cstdio>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace geo {

enum class Color : unsigned char { Red, Green, Blue };

struct Point {
    int x;
    int y;
};

class Shape {
  public:
    Shape(int id, Color c) : id_(id), color_(c) { ++count; }
    virtual ~Shape() = default;
    virtual double area() const { return 0; }
    int id() const { return id_; }
    static int count;

  protected:
    int id_;
    Color color_;
};

int Shape::count = 0;

class Circle : public Shape {
  public:
    Circle(int id, Point c, double r) : Shape(id, Color::Green), center(c), radius(r) {}
    double area() const override { return 3.0 * radius * radius; }
    Point center;
    double radius;
};

template <typename T, int N>
struct Ring {
    T items[N];
    int head;
    T first() const { return items[head]; }
};

}  // namespace geo

union Word {
    int i;
    float f;
    unsigned char bytes[4];
};

struct Flags {
    unsigned ready : 1;
    unsigned mode : 3;
    int delta : 4;
};

static int use(const geo::Shape &s, geo::Shape &&t, const int &n) {
    return s.id() + t.id() + n;
}

int inspect(geo::Circle &c, const std::string &name) {
    std::string s = name + "!";
    std::string empty;
    std::vector<int> v{0, 7, 14, 21, 28};
    std::vector<int> big(1000);
    for (int i = 0; i < 1000; i++)
        big[i] = i * 7;
    std::vector<bool> bits{true, false, true, true};
    std::vector<std::string> words{"alpha", "beta"};
    std::array<int, 3> arr{1, 2, 3};
    std::deque<int> dq{4, 5, 6};
    std::list<int> lst{7, 8};
    std::forward_list<int> fl{9, 10};
    std::map<std::string, int> m{{"one", 1}, {"two", 2}};
    std::multimap<int, char> mm{{1, 'a'}, {1, 'b'}};
    std::set<int> st{3, 1, 2};
    std::multiset<int> ms{5, 5};
    std::unordered_map<int, int> um{{1, 10}};
    std::unordered_set<int> us{42};
    auto sp = std::make_shared<int>(5);
    std::weak_ptr<int> wp = sp;
    auto up = std::make_unique<geo::Point>(geo::Point{3, 4});
    std::optional<int> opt = 9;
    std::optional<int> none;
    std::variant<int, double> var = 2.5;
    std::tuple<int, char, double> tup{1, 'x', 0.5};
    std::atomic<int> at{17};
    geo::Ring<short, 3> ring{{1, 2, 3}, 1};
    Word w;
    w.i = 0x3f800000;
    Flags f{1, 5, -3};
    geo::Color col = geo::Color::Blue;
    geo::Shape &base = c;
    std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    int total = use(c, geo::Circle(9, {0, 0}, 1.0), 3);
    std::printf("%s %zu %d %d %d\n", s.c_str(), v.size(), total, ring.first(), f.mode);  // stop
    return total + (int)arr.size() + (int)dq.size() + (int)st.size() + (base.id() > 0) +
           (col == geo::Color::Blue) + *sp + up->x + *opt + (int)std::get<1>(var) + at.load() +
           (int)m.size() + (int)mm.size() + (int)ms.size() + (int)um.size() + (int)us.size() +
           (int)lst.size() + (int)bits.size() + (int)words.size() + (int)empty.size() +
           (none ? 1 : 0) + (int)std::get<0>(tup) + (int)big.size() + fl.front() + wp.use_count();
}

int main() {
    geo::Circle c(1, geo::Point{2, 3}, 1.5);
    std::thread t([&c] { std::printf("area %g\n", c.area()); });
    t.join();
    return inspect(c, "circle") > 0 ? 0 : 1;
}
