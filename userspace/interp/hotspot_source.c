// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A Java method's source file, for the live view's source page. A class
 * names only its file's base name (its SourceFile: "Spin.java"); javac and
 * the build tools lay sources out by package ("demo/Spin.java"), beside the
 * classes or in the source tree next to a build tool's output. Looked for in
 * this order, always under the JVM's own root and working directory, as it
 * names them (a tenant's path never reaches our files):
 *   - its working directory: the class path when none is given, and where
 *     `java Spin.java` (the source launcher) is usually run;
 *   - each directory of its class path (-cp, -classpath, --class-path, else
 *     $CLASSPATH), and for a build tool's output directory its source
 *     directory: Maven's target/classes and target/test-classes, Gradle's
 *     build/classes/java/main and .../test (src/main/java, src/test/java).
 * Jars are not searched (they carry classes, not sources), nor the JDK's
 * own sources (lib/src.zip): those methods' pages show counts without text.
 *
 * Error rule: negative errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interp/hotspot.h"
#include "procs/procmaps.h"

#define ARGS_MAX (256u << 10) /* of /proc/PID/cmdline or environ read */

/* path (relative), resolved beneath the process's working directory: no "..", no absolute link. */
static int open_beneath_cwd(uint32_t pid, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	char cwd[32];
	struct stat st;
	int dir, fd, err;

	snprintf(cwd, sizeof(cwd), "/proc/%u/cwd", pid);
	dir = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	fd = (int)syscall(__NR_openat2, dir, path, &how, sizeof(how));
	err = -errno;
	close(dir);
	if (fd < 0)
		return err;
	/* Regular files only, opened blocking again (O_NONBLOCK guarded a FIFO's open). */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, 0)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* dir/path: dir as the JVM names it (absolute: in its root; relative: beneath its cwd). */
static int open_in(uint32_t pid, const char *dir, size_t len, const char *path)
{
	struct stat st;
	char buf[4096];
	int n;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, dir, path);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (buf[0] == '/')
		return procmap__open_in_root((int)pid, buf, true, &st);
	return open_beneath_cwd(pid, buf[0] == '.' && buf[1] == '/' ? buf + 2 : buf);
}

/* A build tool's output directory (suffix) and its sources (replacement). */
static const struct {
	const char *classes, *sources;
} layouts[] = {
	{ "target/classes", "src/main/java" },
	{ "target/test-classes", "src/test/java" },
	{ "build/classes/java/main", "src/main/java" },
	{ "build/classes/java/test", "src/test/java" },
};

/* path in class path entry [dir, dir + len): the entry itself, then its build tool's sources. */
static int open_in_entry(uint32_t pid, const char *dir, size_t len, const char *path)
{
	char src[4096];
	size_t i, n;
	int fd;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!len ||
	    (len >= 4 &&
	     (!memcmp(dir + len - 4, ".jar", 4) || !memcmp(dir + len - 4, ".zip", 4))) ||
	    dir[len - 1] == '*')
		return -ENOENT;
	fd = open_in(pid, dir, len, path);
	if (fd >= 0)
		return fd;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		n = strlen(layouts[i].classes);
		if (len < n || memcmp(dir + len - n, layouts[i].classes, n) ||
		    (len > n && dir[len - n - 1] != '/') ||
		    len - n + strlen(layouts[i].sources) >= sizeof(src))
			continue;
		memcpy(src, dir, len - n);
		strcpy(src + len - n, layouts[i].sources);
		fd = open_in(pid, src, strlen(src), path);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

/* The NUL-separated strings of /proc/PID/NAME (at most ARGS_MAX bytes), NUL-terminated. */
static char *read_strings(uint32_t pid, const char *name, size_t *size)
{
	char path[48], *buf;
	ssize_t r;
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(ARGS_MAX + 1);
	while (buf && n < ARGS_MAX && (r = read(fd, buf + n, ARGS_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	if (buf)
		buf[n] = 0;
	*size = n;
	return buf;
}

/* The JVM's class path: its option's value, else $CLASSPATH, else NULL (its cwd alone). */
static char *class_path(uint32_t pid)
{
	static const char *const opts[] = { "-cp", "-classpath", "--class-path" };
	char *args, *env, *p, *end, *found = NULL, *ret;
	size_t size, i;

	args = read_strings(pid, "cmdline", &size);
	if (!args)
		return NULL;
	/* Options end at the main class, -jar's jar or --module: a program's own arguments follow.
	 */
	for (p = args, end = args + size; p < end && !found; p += strlen(p) + 1) {
		if (p != args && p[0] != '-')
			break;
		if (!strcmp(p, "-jar") || !strcmp(p, "-m") || !strcmp(p, "--module"))
			break;
		if (!strncmp(p, "--class-path=", 13)) {
			found = p + 13;
			break;
		}
		for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
			if (!strcmp(p, opts[i]) && p + strlen(p) + 1 < end)
				found = p + strlen(p) + 1;
	}
	if (found) {
		ret = strdup(found);
		free(args);
		return ret;
	}
	free(args);
	env = read_strings(pid, "environ", &size);
	if (!env)
		return NULL;
	for (p = env, end = env + size; p < end; p += strlen(p) + 1) {
		if (!strncmp(p, "CLASSPATH=", 10)) {
			ret = strdup(p + 10);
			free(env);
			return ret;
		}
	}
	free(env);
	return NULL;
}

int hotspot__source_open(uint32_t pid, const char *path)
{
	char *cp, *p, *colon;
	int fd;

	if (!pid || !path || !*path || path[0] == '/')
		return -EINVAL;
	fd = open_beneath_cwd(pid, path);
	if (fd >= 0)
		return fd;
	cp = class_path(pid);
	for (p = cp; p && *p && fd < 0; p = colon ? colon + 1 : p + strlen(p)) {
		colon = strchr(p, ':');
		fd = open_in_entry(pid, p, colon ? (size_t)(colon - p) : strlen(p), path);
	}
	free(cp);
	return fd >= 0 ? fd : -ENOENT;
}
