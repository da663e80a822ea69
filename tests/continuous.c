// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Continuous mode's test driver, for tests/continuous.test.
 *
 *   continuous selftest DIR
 *       in-process checks that need no BPF (PASS/FAIL lines): label and size
 *       parsing, Pyroscope URLs and names, the spool's limits and what it
 *       leaves alone, files that never replace or follow anything
 *   continuous run -o OUT_DIR [options]
 *       opens a session (as sfbpf-top would) and calls continuous__run with
 *       the signal flags wired as the front end wires them: SIGTERM/SIGINT
 *       end the run (flushing), SIGHUP reopens the outputs. Prints "running"
 *       on stdout once sampling started.
 *
 * run options:
 *   -p PID[,PID]  processes (default: the whole system)   -F HZ  (default 99)
 *   -i SECS interval   -d SECS duration   -k N keep files   -K SIZE keep bytes
 *   -l KEY=VALUE label (repeatable)   -H HOSTNAME   -a APP name
 *   -u URL push   -t TENANT   -A FILE basic auth (user:password)
 *   -s DIR spool   -m N spool files   -M SIZE spool bytes
 *   -b SECS longest backoff   -T SECS flush timeout   -S stats   -v verbose
 *   -O URL OTLP export   -P [ADDR:]PORT metrics   -C CGROUP only this cgroup v2 directory
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomicfile.h"
#include "top/continuous_loop.h"
#include "output/push.h"
#include "profile/session.h"
#include "output/spool.h"
#include "procs/cgroups.h"

#define TEST_PREFIX "continuous-"
#include "testlib.h"

/* ---- selftest ---------------------------------------------------------------------- */

static bool label_ok(const char *arg)
{
	struct pprof_label l;
	const char *why;
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", arg);
	return continuous_parse_label(buf, &l, &why) == 0;
}

static void test_labels(void)
{
	static const char *const good[] = { "service=api", "env=prod-1", "k8s.ns=a_b",
					    "_x=1.2.3", "region=eu/west" };
	static const char *const bad[] = { "noeq",	   "=v",       "k=",	"1k=v",
					   "__name__=cpu", "k=a,b",    "k=a b", "k={x}",
					   "k=a=b",	   "bad key=v", "k=\"q\"", "k=\xc3\xa9" };
	struct pprof_label l;
	const char *why;
	char buf[] = "service=db-1";
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		report(label_ok(good[i]), "label-accepts", "%s", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		report(!label_ok(bad[i]), "label-rejects", "accepted %s", bad[i]);
	report(!continuous_parse_label(buf, &l, &why) && !strcmp(l.key, "service") &&
		       !strcmp(l.value, "db-1"),
	       "label-split", "got %s / %s", l.key, l.value);
}

static void test_sizes(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = { { "4096", 4096 },	     { "100k", 100 << 10 }, { "512M", 512ULL << 20 },
		     { "2G", 2ULL << 30 },   { "10MiB", 10ULL << 20 }, { "1tb", 1ULL << 40 },
		     { "0", 0 } };
	static const char *const bad[] = { "", "x", "5Q", "-1", "1.5G", "99999999999999T",
					   "12Mx" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		report(!continuous_parse_size(good[i].s, &v) && v == good[i].v, "size", "%s",
		       good[i].s);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		report(continuous_parse_size(bad[i], &v) == -EINVAL, "size-rejects", "%s", bad[i]);
}

static void test_url(const char *base, const char *want)
{
	struct pprof_label tags[] = { { "hostname", "h1" }, { "env", "prod" } };
	struct push_opts o = { .url = base, .tags = tags, .nr_tags = 2, .sample_rate = 99 };
	char got[1024];

	push_ingest_url(&o, 1700000000, 1700000015, got, sizeof(got));
	report(!strcmp(got, want), "ingest-url", "%s: got %s", base, got);
}

static void test_push_syntax(void)
{
	static const char *const bad[] = { "ftp://h", "http://", "http:///x", "h:4040",
					   "http://h/x?y=1", "http://h/#f", "http://h /" };
	const char q[] = "?name=sfbpf%7Bhostname%3Dh1%2Cenv%3Dprod%7D&from=1700000000"
			 "&until=1700000015&format=pprof&sampleRate=99&spyName=sfbpf";
	char want[512], red[256];
	size_t i;

	report(!push_check_url("http://127.0.0.1:4040") && !push_check_url("https://[::1]/p/"),
	       "url-accepts", "rejected a good URL");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		report(push_check_url(bad[i]) != NULL, "url-rejects", "accepted %s", bad[i]);
	snprintf(want, sizeof(want), "http://127.0.0.1:4040/ingest%s", q);
	test_url("http://127.0.0.1:4040", want);
	test_url("http://127.0.0.1:4040/", want);
	test_url("http://127.0.0.1:4040/ingest", want);
	snprintf(want, sizeof(want), "https://gw.example/pyroscope/ingest%s", q);
	test_url("https://gw.example/pyroscope/", want);
	push_redact_url("https://user:secret@host:443/x@y", red, sizeof(red));
	report(!strcmp(red, "https://***@host:443/x@y"), "redact", "got %s", red);
	push_redact_url("http://host/a@b", red, sizeof(red));
	report(!strcmp(red, "http://host/a@b"), "redact-none", "got %s", red);
	report(push_valid_app_name("my-app.cpu_1") && !push_valid_app_name("a{b}") &&
		       !push_valid_app_name(""),
	       "app-name", "wrong verdict");
}

static int make_file(int dirfd, const char *name, size_t size)
{
	char buf[4096];
	size_t n;
	int fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	memset(buf, 'x', sizeof(buf));
	for (; size; size -= n) {
		n = size < sizeof(buf) ? size : sizeof(buf);
		if (write(fd, buf, n) != (ssize_t)n)
			break;
	}
	close(fd);
	return 0;
}

static bool exists(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

/* Limits drop the oldest, never the one in flight; strangers are left alone. */
static void test_spool(const char *dir)
{
	struct spool_limits lim = { .max_files = 3 };
	char path[4096], src[4096], name[32];
	struct spool_entry e, e2;
	struct spool_stats st;
	struct spool *sp;
	int i, sfd, srcfd;

	snprintf(path, sizeof(path), "%s/spool", dir);
	snprintf(src, sizeof(src), "%s/src", dir);
	sfd = atomicfile_dir_open(path, true);
	srcfd = atomicfile_dir_open(src, false);
	if (sfd < 0 || srcfd < 0) {
		report(false, "spool-setup", "%s", strerror(-(sfd < 0 ? sfd : srcfd)));
		return;
	}
	make_file(sfd, "notes.txt", 10);
	symlinkat("/etc/hostname", sfd, "000000000001-000000000002.pb.gz");
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		make_file(srcfd, name, 100 + i);
	}
	sp = spool__open(path, true, &lim);
	report(sp != NULL, "spool-open", "%s", strerror(errno));
	if (!sp)
		return;
	spool__add(sp, srcfd, "p0", 100, 115);
	report(!spool__take(sp, &e) && e.from == 100, "spool-take", "took %ld", (long)e.from);
	for (i = 1; i < 5; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		spool__add(sp, srcfd, name, 100 + 15 * i, 115 + 15 * i);
	}
	spool__stats(sp, &st);
	/* p0 is in flight: p1 and p2 went instead. */
	report(st.files == 3 && st.dropped == 2 && exists(sfd, "000000000100-000000000115.pb.gz") &&
		       !exists(sfd, "000000000115-000000000130.pb.gz"),
	       "spool-limit-spares-in-flight", "%u files, %lu dropped", st.files,
	       (unsigned long)st.dropped);
	spool__finish(sp, &e, true);
	report(!spool__take(sp, &e2) && e2.from == 145, "spool-oldest-first", "took %ld",
	       (long)e2.from);
	spool__finish(sp, &e2, false);
	spool__add(sp, srcfd, "p4", 160, 175); /* same interval again: a second name */
	spool__stats(sp, &st);
	report(exists(sfd, "000000000160-000000000175.1.pb.gz") && st.files == 3,
	       "spool-same-interval", "%u files", st.files);
	spool__close(sp);
	sp = spool__open(path, true, &lim);
	spool__stats(sp, &st);
	report(sp && st.files == 3, "spool-rescan", "%u files", st.files);
	report(exists(sfd, "notes.txt") && exists(sfd, "000000000001-000000000002.pb.gz"),
	       "spool-leaves-strangers", "a file not ours went away");
	spool__close(sp);
	snprintf(path, sizeof(path), "%s/spool-link", dir);
	symlinkat(src, AT_FDCWD, path);
	sp = spool__open(path, true, &lim);
	report(!sp && (errno == ELOOP || errno == ENOTDIR), "spool-own-dir-not-symlink",
	       "opened through a symlink");
	spool__close(sp);
	close(sfd);
	close(srcfd);
}

/* A taken name stays as it was, even a symlink; a commit under a free name works. */
static void test_atomicfile(const char *dir)
{
	struct atomicfile af;
	char path[4096], buf[16] = "";
	int dirfd, err, fd;

	snprintf(path, sizeof(path), "%s/files", dir);
	dirfd = atomicfile_dir_open(path, false);
	if (dirfd < 0)
		return report(false, "atomicfile-setup", "%s", strerror(-dirfd));
	make_file(dirfd, "taken", 3);
	symlinkat("taken", dirfd, "link");
	err = atomicfile__open(&af, dirfd);
	if (!err && write(af.fd, "new", 3) != 3)
		err = -EIO;
	report(!err && atomicfile__commit(&af, "taken") == -EEXIST, "atomicfile-no-replace",
	       "replaced a file");
	report(atomicfile__commit(&af, "link") == -EEXIST, "atomicfile-no-follow",
	       "wrote through a symlink");
	err = atomicfile__commit(&af, "fresh");
	fd = openat(dirfd, "fresh", O_RDONLY);
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	report(!err && !strcmp(buf, "new"), "atomicfile-commit", "%s", strerror(-err));
	if (fd >= 0)
		close(fd);
	fd = openat(dirfd, "taken", O_RDONLY);
	memset(buf, 0, sizeof(buf));
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	report(!strcmp(buf, "xxx"), "atomicfile-taken-intact", "now %s", buf);
	if (fd >= 0)
		close(fd);
	close(dirfd);
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "0d2c6a4e-1b3f-4c5d-8e9f-a0b1c2d3e4f5"
#define UID_ "0d2c6a4e_1b3f_4c5d_8e9f_a0b1c2d3e4f5"

/* Container ids, pod UIDs and services from the runtimes' cgroup path forms. */
static void test_cgroup_labels(void)
{
	static const struct {
		const char *path, *id, *pod, *unit;
	} cases[] = {
		{ "/docker/" ID64, ID64, "", "" },
		{ "/system.slice/docker-" ID64 ".scope", ID64, "", "" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID64 ".scope",
		  ID64, UID, "" },
		{ "/kubepods/besteffort/pod" UID "/" ID64, ID64, UID, "" },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID64 ".scope", ID64, UID, "" },
		{ "/kubepods/pod" UID "/crio-" ID64, ID64, UID, "" },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID64 ".scope", "", UID,
		  "" },
		{ "/machine.slice/libpod-" ID64 ".scope/container", ID64, "", "" },
		{ "/default/" ID64, ID64, "", "" },
		{ "/system.slice/nginx.service", "", "", "nginx" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "", "",
		  "foo" },
		{ "/user.slice/user-1000.slice/session-3.scope", "", "", "" },
		{ "/system.slice/docker-" ID64 "0.scope", "", "", "" }, /* 65 digits */
		/* Docker in docker: the outer container (the inner one's name is its own). */
		{ "/docker/" ID64 "/docker/fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
		  ID64, "", "" },
		{ "/kubepods/podnot-a-uid/" ID64, ID64, "", "" },
		{ "/", "", "", "" },
		{ "", "", "", "" },
	};
	struct cgroup_info ci;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cgroups_parse_path(cases[i].path, &ci);
		report(!strcmp(ci.container_id, cases[i].id) && !strcmp(ci.pod_uid, cases[i].pod) &&
			       !strcmp(ci.unit, cases[i].unit),
		       "cgroup-labels", "%s: id '%s' pod '%s' unit '%s'", cases[i].path,
		       ci.container_id, ci.pod_uid, ci.unit);
	}
	cgroups_parse_path(NULL, &ci);
	report(!ci.container_id[0] && !ci.pod_uid[0] && !ci.unit[0], "cgroup-labels-null", "not empty");
}

static int selftest(const char *dir)
{
	test_cgroup_labels();
	test_labels();
	test_sizes();
	test_push_syntax();
	test_spool(dir);
	test_atomicfile(dir);
	return failures ? 1 : 0;
}

/* ---- run --------------------------------------------------------------------------- */

static volatile sig_atomic_t exiting, reopen;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reopen = 1;
	else
		exiting = 1;
}

static void handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: poll wakes up */

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int parse_pids(char *arg, struct session_opts *so)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok && so->nr_pids < SESSION_MAX_PIDS;
	     tok = strtok_r(NULL, ",", &save))
		so->pids[so->nr_pids++] = atoi(tok);
	return so->nr_pids ? 0 : -EINVAL;
}

static int size_arg(const char *arg, uint64_t *out)
{
	if (continuous_parse_size(arg, out)) {
		fprintf(stderr, "continuous: bad size %s\n", arg);
		exit(2);
	}
	return 0;
}

static int run(int argc, char **argv)
{
	static struct pprof_label labels[CONTINUOUS_MAX_LABELS];
	struct session *sess = NULL;
	struct session_opts so = { .freq = 99, .user_stacks = true, .kernel_stacks = true };
	struct continuous_opts o = { .interval = 1, .keep_files = CONTINUOUS_DEFAULT_KEEP,
				     .flush_timeout = CONTINUOUS_DEFAULT_FLUSH,
				     .labels = labels, .exiting = &exiting, .reopen = &reopen };
	const char *why;
	int c, err;

	while ((c = getopt(argc, argv, "o:p:F:i:d:k:K:l:H:a:u:t:A:s:m:M:b:T:SvO:P:C:")) != -1) {
		switch (c) {
		case 'o': o.out_dir = optarg; break;
		case 'p':
			if (parse_pids(optarg, &so))
				return 2;
			break;
		case 'F': so.freq = strtoul(optarg, NULL, 10); break;
		case 'i': o.interval = strtoul(optarg, NULL, 10); break;
		case 'd': o.duration = strtod(optarg, NULL); break;
		case 'k': o.keep_files = strtoul(optarg, NULL, 10); break;
		case 'K': size_arg(optarg, &o.keep_bytes); break;
		case 'l':
			if (o.nr_labels == CONTINUOUS_MAX_LABELS ||
			    continuous_parse_label(optarg, &labels[o.nr_labels], &why)) {
				fprintf(stderr, "continuous: bad label: %s\n", why);
				return 2;
			}
			o.nr_labels++;
			break;
		case 'H': o.hostname = optarg; break;
		case 'a': o.app_name = optarg; break;
		case 'u': o.push_url = optarg; break;
		case 't': o.tenant = optarg; break;
		case 'A': o.auth_file = optarg; break;
		case 's': o.spool_dir = optarg; break;
		case 'm': o.spool_files = strtoul(optarg, NULL, 10); break;
		case 'M': size_arg(optarg, &o.spool_bytes); break;
		case 'b': o.backoff_max = strtod(optarg, NULL); break;
		case 'T': o.flush_timeout = strtod(optarg, NULL); break;
		case 'S': o.stats = true; break;
		case 'v': o.verbose++; break;
		case 'O': o.otlp_url = optarg; break;
		case 'P': o.metrics_addr = optarg; break;
		case 'C': so.cgroup = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc || !o.out_dir) {
		fprintf(stderr, "continuous run: -o OUT_DIR is required, and no other arguments\n");
		return 2;
	}
	handle_signals();
	err = session__open(&sess, &so);
	if (err)
		return 1;
	printf("running\n");
	fflush(stdout);
	err = continuous__run(sess, &o);
	session__close(sess);
	if (err)
		fprintf(stderr, "continuous: %s\n", strerror(-err));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "selftest"))
		return selftest(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return run(argc - 1, argv + 1);
	fprintf(stderr, "usage: continuous selftest DIR | continuous run -o OUT_DIR [options]\n");
	return 2;
}
