// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * C++ names for the demangler (tests/symbolize_debug.test): namespaces,
 * templates, operators, constructors, a lambda, virtual functions, standard
 * containers. "cxx spin" loops in them forever (compared with perf); "cxx"
 * prints "ready" and waits for EOF on stdin.
 */
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace sfbpf {
namespace geo {

template <typename T, int N> struct Vec {
	T v[N];

	NOINLINE Vec() { std::memset(v, 0, sizeof(v)); }
	NOINLINE Vec operator+(const Vec &o) const
	{
		Vec r;
		for (int i = 0; i < N; i++)
			r.v[i] = v[i] + o.v[i];
		return r;
	}
	NOINLINE Vec &operator+=(T x)
	{
		for (int i = 0; i < N; i++)
			v[i] = v[i] * 3 + x;
		return *this;
	}
	NOINLINE bool operator==(const Vec &o) const { return !std::memcmp(v, o.v, sizeof(v)); }
	NOINLINE T operator[](int i) const { return v[i % N]; }
	NOINLINE explicit operator bool() const { return v[0] != 0; }
};

struct Shape {
	virtual ~Shape() {}
	virtual long area(long k) const = 0;
};

struct Square : Shape {
	long side;
	NOINLINE explicit Square(long s) : side(s) {}
	NOINLINE long area(long k) const override
	{
		long a = 0;
		for (long i = 0; i < 200; i++)
			a += side * side + k * i;
		return a;
	}
};

} // namespace geo

NOINLINE long count_words(const std::map<std::string, int> &m, int rounds)
{
	long n = 0;
	for (int r = 0; r < rounds; r++)
		for (const auto &kv : m)
			n += kv.second * (long)kv.first.size();
	return n;
}

template <typename F> NOINLINE long apply(F f, long x)
{
	return f(x) + f(x + 1);
}

} // namespace sfbpf

static volatile long sink;

NOINLINE static long work(long k)
{
	sfbpf::geo::Vec<long, 4> a, b;
	sfbpf::geo::Vec<double, 3> c;
	sfbpf::geo::Square sq(k);
	sfbpf::geo::Shape *s = &sq;
	std::map<std::string, int> words{ { "alpha", 1 }, { "beta", 2 }, { "gamma", 3 } };
	std::vector<long> *vec = new std::vector<long>(64, k);

	a += k;
	b += 2 * k;
	c += 0.5;
	a = a + b;
	long r = a[1] + (a == b) + (bool)c + s->area(k) + sfbpf::count_words(words, 50);
	r += sfbpf::apply([k](long x) { return x * k + 1; }, r);
	r += (*vec)[3];
	delete vec;
	return r;
}

int main(int argc, char **argv)
{
	char buf[256];

	if (argc > 1 && !strcmp(argv[1], "spin")) {
		for (long k = 0;; k++)
			sink = sink + work(k);
	}
	sink = work(argc);
	printf("func main %p\nready\n", (void *)main);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
