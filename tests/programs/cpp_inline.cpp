#include <cstdio>
#include <thread>
#include <vector>

static int calls;

// Inlined into work() at -O2, and kept out of line for the call through a pointer.
static inline int scale(int x) {
    calls++;
    return x * 3 + 1;
}

__attribute__((noinline)) int work(int n) {
    int total = 0;
    for (int i = 0; i < n; i++)
        total += scale(i);
    return total;
}

int (*volatile indirect)(int) = scale;

int main() {
    std::vector<std::thread> ts;
    int results[2] = {0, 0};
    // One thread after the other: the first breakpoint hit is always work(10)'s.
    for (int t = 0; t < 2; t++) {
        ts.emplace_back([&results, t] { results[t] = work(10 + t); });
        ts.back().join();
    }
    int direct = indirect(5);
    std::printf("%d %d %d %d\n", results[0], results[1], direct, calls);
    return 0;
}
