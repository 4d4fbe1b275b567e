/*
 * Stand-in for NVIDIA's Pyxis SPANK plugin, for the rv testbed's cluster 2 (Slurm 24.11; built by
 * testbed/containers.sh against the spank.h of the Slurm it is loaded by). docs/testbed.md, "Containers".
 *
 * Like Pyxis it registers --container-image, --container-mounts, --container-workdir,
 * --container-name=NAME[:FLAGS] and --container-env=NAME[,NAME...] with srun (so `srun --help` lists
 * them and srun accepts them) and, in the job step (remote context):
 *   - keeps named containers as Pyxis does (per node; container_scope=job: pyxis_<job>_<name>,
 *     removed by the job's epilog; global: pyxis_<name>, kept): a step naming one that exists
 *     reuses it and imports nothing (a running one: its namespaces, --container-mounts ignored);
 *     flags auto|create|exec|no_exec as pyxis's args.c and pyxis_slurmstepd.c check them;
 *   - applies the image's ENV (rv-image.env beside the image's root) over the job's values, except
 *     for the names --container-env lists (Pyxis: "their existing values in the image take
 *     precedence"; the listed ones are preserved from the host);
 *   - records what it was asked (one JSON line per step and node in log=FILE: image, mounts,
 *     workdir, the step's argv, its cwd and the names of its environment variables, never values);
 *   - refuses an image it cannot "import" the way Pyxis does ("pyxis: failed to import docker
 *     image: IMAGE", the step fails): docker://rv-test/missing, any other registry (no network);
 *   - runs each task in a separate root filesystem: a new mount namespace (the task process is
 *     root before Slurm drops to the user) with a tmpfs root, the image's /etc from images=DIR,
 *     /usr of the node's Debian root read-only, /proc, /sys, a minimal /dev, a private /tmp, the
 *     GPUs (the stand-in nvidia-smi, its state under state=DIR, /dev/nvidiaN) unless the image is
 *     rv-test/nogpu (then nvidia-smi finds no device), and --container-mounts SRC:DST[:ro];
 *     then chroot, and chdir to --container-workdir as the user.
 * Images: [docker://][USER@][REGISTRY#]rv-test/NAME[:TAG] or a file written by the apptainer
 * stand-in (its "rv-test-image:" lines). Plugin arguments (plugstack.conf):
 *   images=DIR state=DIR nvidia_smi=FILE log=FILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(pyxis, 1);

static char *opt_image;
static char *opt_mounts;
static char *opt_workdir;
static char *opt_name;       /* --container-name's NAME */
static char *opt_name_flags; /* its FLAGS: auto (default), create, exec, no_exec */
static char *opt_env;        /* --container-env's NAME[,NAME...] */
static int scope_job;        /* container_scope=job (Pyxis's default is global) */

/* The plugin's arguments (plugstack.conf): short paths, so that every path made from them fits. */
#define CONF_MAX 1024
static char images_dir[CONF_MAX] = "/var/lib/rv-test-images";
static char state_dir[CONF_MAX] = "/tmp/rv-testbed2";
static char nvidia_smi[CONF_MAX] = "/usr/local/bin/nvidia-smi";
static char log_path[CONF_MAX] = "/tmp/rv-testbed2/container/pyxis.log";

/* The image this step runs in ("base", "nogpu", "env"), once user_init resolved it. */
static char image_root[64];
/* The named container this step uses (its state file) and whether the step imported the image. */
static char container_file[PATH_MAX + CONF_MAX + 512];
static char run_file[sizeof(container_file) + 64];
static int imported;
/* The step's working directory outside (made as an empty directory inside: Slurm chdirs there). */
static char outer_cwd[PATH_MAX];

/* Pyxis refuses an option without its value: "pyxis: --NAME: argument required". */
static int has_arg(const char *optarg, const char *name)
{
	if (optarg && *optarg)
		return 1;
	slurm_error("pyxis: --%s: argument required", name);
	return 0;
}

static int set_opt(char **dst, const char *optarg, const char *name)
{
	if (!has_arg(optarg, name))
		return -1;
	free(*dst);
	*dst = strdup(optarg);
	return *dst ? 0 : -1;
}

/* --container-mounts: SRC:DST[:FLAGS][,...], every part non-empty (Pyxis refuses "", ":", "/tmp:"). */
static int check_mounts(const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *entry;
	int rc = 0;
	if (!copy)
		return -1;
	for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(entry, ':');
		if (colon == entry || (colon && colon[1] == '\0') || (colon && colon[1] == ':')) {
			slurm_error("pyxis: mount: invalid format: %s", entry);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && (arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))) {
		slurm_error("pyxis: mount: invalid format: %s", arg);
		rc = -1;
	}
	free(copy);
	return rc;
}

static int cb_image(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&opt_image, optarg, "container-image");
}

static int cb_mounts(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	if (set_opt(&opt_mounts, optarg, "container-mounts") < 0)
		return -1;
	return check_mounts(opt_mounts);
}

static int cb_workdir(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&opt_workdir, optarg, "container-workdir");
}

/* --container-name=NAME[:FLAGS], as pyxis's args.c parses it (the same value twice is allowed). */
static int cb_name(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	if (!has_arg(optarg, "container-name"))
		return -1;
	if (opt_name) {
		char prev[PATH_MAX];
		snprintf(prev, sizeof(prev), "%s:%s", opt_name, opt_name_flags);
		if (strcmp(prev, optarg) == 0 || (strchr(optarg, ':') == NULL && strcmp(opt_name, optarg) == 0))
			return 0;
		slurm_error("pyxis: --container-name specified multiple times");
		return -1;
	}
	char *dup = strdup(optarg), *flags = dup, *name;
	if (!dup)
		return -1;
	name = strsep(&flags, ":");
	if (!name || !*name) {
		slurm_error("pyxis: --container-name: empty name");
		free(dup);
		return -1;
	}
	if (!flags || !*flags)
		flags = "auto";
	if (strcmp(flags, "auto") != 0 && strcmp(flags, "create") != 0 && strcmp(flags, "exec") != 0 &&
	    strcmp(flags, "no_exec") != 0) {
		slurm_error("pyxis: --container-name: flag must be \"auto\", \"create\", \"exec\" or \"no_exec\"");
		free(dup);
		return -1;
	}
	/* enroot keeps a container as a directory: no '/' in its name (the stand-in's state is a file). */
	if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		slurm_error("pyxis: --container-name: invalid name: %s", name);
		free(dup);
		return -1;
	}
	opt_name = strdup(name);
	opt_name_flags = strdup(flags);
	free(dup);
	return opt_name && opt_name_flags ? 0 : -1;
}

/* --container-env=NAME[,NAME...]: no empty name (pyxis: "invalid format"). */
static int cb_env(int val, const char *optarg, int remote)
{
	if (set_opt(&opt_env, optarg, "container-env") < 0)
		return -1;
	(void)val;
	(void)remote;
	if (optarg[0] == ',' || optarg[strlen(optarg) - 1] == ',' || strstr(optarg, ",,")) {
		slurm_error("pyxis: --container-env: invalid format: %s", optarg);
		return -1;
	}
	return 0;
}

struct spank_option spank_options[] = {
	{ "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
	  "[pyxis] the image to use for the container filesystem. Can be either a docker image given as "
	  "an enroot URI, or a path to a squashfs file on the remote host filesystem.",
	  1, 0, cb_image },
	{ "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
	  "[pyxis] bind mount[s] inside the container. Mount flags are separated with \"+\", e.g. \"ro+rprivate\"",
	  1, 0, cb_mounts },
	{ "container-workdir", "PATH", "[pyxis] working directory inside the container", 1, 0, cb_workdir },
	{ "container-name", "NAME",
	  "[pyxis] name to use for saving and loading the container on the host. Unnamed containers are removed "
	  "after the slurm task is complete; named containers are not. If a container with this name already exists, "
	  "the existing container is used and the import is skipped.",
	  1, 0, cb_name },
	{ "container-env", "NAME[,NAME...]",
	  "[pyxis] names of environment variables to override with the host environment and set at the entrypoint. "
	  "By default, all exported host environment variables are set in the container after the entrypoint is run, "
	  "but their existing values in the image take precedence; the variables specified with this flag are "
	  "preserved from the host and set before the entrypoint runs",
	  1, 0, cb_env },
	SPANK_OPTIONS_TABLE_END
};

static void set_arg(const char *arg)
{
	static const struct {
		const char *key;
		char *dst;
	} keys[] = { { "images=", images_dir },
		     { "state=", state_dir },
		     { "nvidia_smi=", nvidia_smi },
		     { "log=", log_path } };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i].key);
		if (strncmp(arg, keys[i].key, n) == 0) {
			if (strlen(arg + n) >= CONF_MAX)
				slurm_error("pyxis: plugin argument too long (plugstack.conf): %s", arg);
			else
				snprintf(keys[i].dst, CONF_MAX, "%s", arg + n);
			return;
		}
	}
	if (strcmp(arg, "container_scope=job") == 0 || strcmp(arg, "container_scope=global") == 0) {
		scope_job = strcmp(arg, "container_scope=job") == 0;
		return;
	}
	slurm_error("pyxis: unknown plugin argument (plugstack.conf): %s", arg);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	for (int i = 0; i < ac; i++)
		set_arg(av[i]);
	return 0;
}

/* ---- the record ------------------------------------------------------------------------------ */

struct buf {
	char *s;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 1024);
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p)
			return;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void put_s(struct buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_json(struct buf *b, const char *s, size_t n)
{
	put_s(b, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(b, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put_s(b, esc);
		} else {
			put(b, (const char *)&s[i], 1);
		}
	}
	put_s(b, "\"");
}

static void put_field(struct buf *b, const char *key, const char *value)
{
	put_s(b, ",\"");
	put_s(b, key);
	put_s(b, "\":");
	put_json(b, value ? value : "", value ? strlen(value) : 0);
}

/* The node's name: slurmstepd's own SLURMD_NODENAME, else the step's. */
static void node_name(spank_t sp, char *node, size_t len)
{
	const char *n = getenv("SLURMD_NODENAME");
	if (n && *n) { /* slurmstepd's own: the step's may be the batch node's, exported with --export=ALL */
		snprintf(node, len, "%s", n);
		return;
	}
	if (spank_getenv(sp, "SLURMD_NODENAME", node, (int)len) != ESPANK_SUCCESS)
		node[0] = '\0';
}

static int recorded; /* this step has its record */

static void record(spank_t sp, const char *result)
{
	recorded = 1;
	struct buf b = { 0 };
	char tmp[PATH_MAX], node[256] = "";
	uint32_t job = 0, step = 0;
	int argc = 0;
	char **argv = NULL, **env = NULL;
	time_t now = time(NULL);
	struct tm tm;

	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	node_name(sp, node, sizeof(node));
	gmtime_r(&now, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	put_s(&b, "{\"tool\":\"pyxis\"");
	put_field(&b, "time", tmp);
	put_field(&b, "node", node);
	snprintf(tmp, sizeof(tmp), "%u", job);
	put_field(&b, "job", tmp);
	snprintf(tmp, sizeof(tmp), "%u", step);
	put_field(&b, "step", tmp);
	put_field(&b, "image", opt_image);
	put_field(&b, "mounts", opt_mounts);
	put_field(&b, "workdir", opt_workdir);
	put_field(&b, "name", opt_name);
	put_field(&b, "import", imported ? "1" : "0");
	put_field(&b, "cwd", getcwd(tmp, sizeof(tmp)) ? tmp : "");
	put_s(&b, ",\"argv\":[");
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS) {
		for (int i = 0; i < argc; i++) {
			if (i)
				put_s(&b, ",");
			put_json(&b, argv[i], strlen(argv[i]));
		}
	}
	put_s(&b, "],\"env\":[");
	if (spank_get_item(sp, S_JOB_ENV, &env) == ESPANK_SUCCESS && env) {
		for (int i = 0; env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			if (i)
				put_s(&b, ",");
			put_json(&b, env[i], eq ? (size_t)(eq - env[i]) : strlen(env[i]));
		}
	}
	put_s(&b, "]");
	put_field(&b, "result", result);
	put_s(&b, "}\n");
	if (b.s) {
		int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
		if (fd >= 0) {
			ssize_t w = write(fd, b.s, b.len);
			(void)w;
			close(fd);
		}
	}
	free(b.s);
}

/* ---- images ---------------------------------------------------------------------------------- */

/* What an offline enroot prints for a registry it cannot reach or an image the registry lacks. */
static int import_failed(spank_t sp, const char *registry_line)
{
	char line[PATH_MAX + 256];
	snprintf(line, sizeof(line), "failed to import docker image: %s", opt_image);
	record(sp, line);
	slurm_error("pyxis: child %d failed with error code: 1", (int)getpid() + 1);
	slurm_error("pyxis: failed to import docker image: %s", opt_image);
	slurm_error("pyxis: printing enroot log file:");
	slurm_error("pyxis:     [INFO] Querying registry for permission grant");
	slurm_error("pyxis:     %s", registry_line);
	slurm_error("pyxis: couldn't start container");
	return -1;
}

/* Sets image_root from the image, or fails the step as Pyxis does. */
static int resolve_image(spank_t sp)
{
	const char *ref = opt_image;
	char repo[PATH_MAX], tag[256] = "latest", msg[PATH_MAX + 256];

	if (ref[0] == '/' || ref[0] == '.') { /* a squashfs (here: a file of the apptainer stand-in) */
		FILE *f = fopen(ref, "r");
		char line[PATH_MAX];
		image_root[0] = '\0';
		if (!f) {
			snprintf(msg, sizeof(msg), "%s: %s", ref, strerror(errno));
			record(sp, msg);
			slurm_error("pyxis: failed to create container filesystem");
			slurm_error("pyxis: printing enroot log file:");
			slurm_error("pyxis:     [ERROR] No such file or directory: %s", ref);
			slurm_error("pyxis: couldn't start container");
			return -1;
		}
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "rv-test-root: ", 14) == 0) {
				snprintf(image_root, sizeof(image_root), "%.63s", line + 14);
				image_root[strcspn(image_root, "\n")] = '\0';
			}
		}
		fclose(f);
		if (!image_root[0] || strchr(image_root, '/') || strchr(image_root, '.')) {
			record(sp, "not a squashfs image");
			slurm_error("pyxis: failed to create container filesystem");
			slurm_error("pyxis: printing enroot log file:");
			slurm_error("pyxis:     [ERROR] Invalid image format: %s", ref);
			slurm_error("pyxis: couldn't start container");
			return -1;
		}
		return 0;
	}
	if (strncmp(ref, "docker://", 9) == 0)
		ref += 9;
	if (strchr(ref, '@'))
		ref = strchr(ref, '@') + 1;
	if (strchr(ref, '#')) { /* REGISTRY#IMAGE: no registry is reachable from the testbed */
		char host[256];
		snprintf(host, sizeof(host), "%.*s", (int)(strchr(ref, '#') - ref), ref);
		snprintf(msg, sizeof(msg), "[ERROR] Could not resolve host: %s", host);
		return import_failed(sp, msg);
	}
	snprintf(repo, sizeof(repo), "%s", ref);
	char *colon = strrchr(repo, ':');
	if (colon && !strchr(colon, '/')) {
		snprintf(tag, sizeof(tag), "%s", colon + 1);
		*colon = '\0';
	}
	if (strncmp(repo, "rv-test/", 8) != 0 || !repo[8])
		return import_failed(sp, "[ERROR] Could not resolve host: registry-1.docker.io");
	if (strcmp(repo + 8, "missing") == 0) {
		snprintf(msg, sizeof(msg),
			 "[ERROR] URL https://registry-1.docker.io/v2/%s/manifests/%s returned error code: 404 Not Found",
			 repo, tag);
		return import_failed(sp, msg);
	}
	snprintf(image_root, sizeof(image_root), "%s",
		 strcmp(repo + 8, "nogpu") == 0 ? "nogpu" : strcmp(repo + 8, "env") == 0 ? "env" : "base");
	return 0;
}

/* The import (enroot's, at the step's start): Pyxis's message, then the image, or the step fails. */
static int import_image(spank_t sp)
{
	if (opt_image[0] != '/' && opt_image[0] != '.')
		slurm_spank_log("pyxis: importing docker image: %s", opt_image);
	if (resolve_image(sp) < 0)
		return -1;
	imported = 1;
	return 0;
}

/* ---- named containers (--container-name) ------------------------------------------------------ */

static int mkdirs(const char *path, mode_t mode);

/* STATE/container/named/<node>: the node's named containers (world-writable: every user's jobs). */
static void named_dir(spank_t sp, char *dir, size_t len)
{
	char node[256] = "";
	if (sp)
		node_name(sp, node, sizeof(node));
	else
		snprintf(node, sizeof(node), "%s", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "");
	snprintf(dir, len, "%s/container/named/%s", state_dir, node[0] ? node : "unknown");
}

/* -1: no such container; 0: it exists, no step runs in it; 1: a step runs in it (a live pid in .run/). */
static int container_state(const char *file)
{
	char run[sizeof(container_file) + 8];
	struct stat st;
	int running = 0;
	if (stat(file, &st) < 0)
		return -1;
	snprintf(run, sizeof(run), "%s.run", file);
	DIR *d = opendir(run);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		long pid = strtol(e->d_name, NULL, 10);
		if (pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			running = 1;
	}
	closedir(d);
	return running;
}

/* Reads the state file: the image root and the mounts the container was made with. */
static int read_container(const char *file, char **mounts)
{
	char line[PATH_MAX * 2];
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	image_root[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "root=", 5) == 0)
			snprintf(image_root, sizeof(image_root), "%.63s", line + 5);
		else if (strncmp(line, "mounts=", 7) == 0 && mounts && line[7])
			*mounts = strdup(line + 7);
	}
	fclose(f);
	return image_root[0] ? 0 : -1;
}

/* The container's "namespaces" are this step's while it runs: <file>.run/<slurmstepd pid>. */
static void register_step(void)
{
	char run[sizeof(container_file) + 8];
	snprintf(run, sizeof(run), "%s.run", container_file);
	mkdir(run, 01777);
	snprintf(run_file, sizeof(run_file), "%s.run/%ld", container_file, (long)getpid());
	int fd = open(run_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/* Pyxis's user_init for --container-name (pyxis_slurmstepd.c): 0 = go on (image_root set), -1 = fail. */
static int use_named(spank_t sp)
{
	char dir[CONF_MAX + 300], full[PATH_MAX];
	uint32_t job = 0;
	if (strlen(opt_name) > 200) {
		slurm_error("pyxis: --container-name: name too long");
		return -1;
	}
	spank_get_item(sp, S_JOB_ID, &job);
	if (scope_job)
		snprintf(full, sizeof(full), "pyxis_%u_%s", job, opt_name);
	else
		snprintf(full, sizeof(full), "pyxis_%s", opt_name);
	named_dir(sp, dir, sizeof(dir));
	mkdirs(dir, 01777);
	snprintf(container_file, sizeof(container_file), "%s/%s", dir, full);
	int pid = container_state(container_file);
	if (strcmp(opt_name_flags, "create") == 0 && pid >= 0) {
		slurm_error("pyxis: error: \"create\" flag was passed to --container-name but the container already exists");
		return -1;
	}
	if (strcmp(opt_name_flags, "exec") == 0 && pid <= 0) {
		slurm_error("pyxis: error: \"exec\" flag was passed to --container-name but the container is not running");
		return -1;
	}
	if (strcmp(opt_name_flags, "no_exec") == 0 && pid > 0)
		pid = 0;
	if (pid > 0) {
		char *mounts = NULL;
		slurm_info("pyxis: reusing existing container namespaces");
		if (opt_mounts)
			slurm_spank_log("pyxis: ignoring --container-mounts when attaching to a running container");
		if (read_container(container_file, &mounts) < 0)
			return -1;
		free(opt_mounts);
		opt_mounts = mounts; /* the running container's own */
	} else if (pid == 0) {
		slurm_info("pyxis: reusing existing container filesystem");
		if (read_container(container_file, NULL) < 0)
			return -1;
	} else if (!opt_image) {
		slurm_error("pyxis: error: a container with name \"%s\" does not exist, and --container-image is not set",
			    full);
		return -1;
	} else {
		if (import_image(sp) < 0)
			return -1;
		FILE *f = fopen(container_file, "w");
		if (!f) {
			slurm_error("pyxis: couldn't create container %s: %s", full, strerror(errno));
			return -1;
		}
		fprintf(f, "root=%s\nmounts=%s\n", image_root, opt_mounts ? opt_mounts : "");
		fclose(f);
	}
	register_step();
	return 0;
}

/* Removes the job's containers (names starting with `prefix`) from one node's directory. */
static void remove_job_in(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char path[PATH_MAX];
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		DIR *r = opendir(path); /* <container>.run/: the steps' pid files */
		if (r) {
			for (struct dirent *p; (p = readdir(r));) {
				char pf[PATH_MAX + 300];
				snprintf(pf, sizeof(pf), "%s/%s", path, p->d_name);
				if (p->d_name[0] != '.')
					unlink(pf);
			}
			closedir(r);
			rmdir(path);
		} else {
			unlink(path);
		}
	}
	closedir(d);
}

/* The job's named containers on this node go with the job when container_scope=job (pyxis's epilog);
 * without the node's name (SLURMD_NODENAME), every node's of this job. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char dir[CONF_MAX + 300], prefix[64];
	uint32_t job = 0;
	for (int i = 0; i < ac; i++)
		set_arg(av[i]);
	if (!scope_job || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
		return 0;
	snprintf(prefix, sizeof(prefix), "pyxis_%u_", job);
	if (getenv("SLURMD_NODENAME") && *getenv("SLURMD_NODENAME")) {
		named_dir(NULL, dir, sizeof(dir));
		remove_job_in(dir, prefix);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/container/named", state_dir);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char node[sizeof(dir) + 300];
		if (e->d_name[0] == '.')
			continue;
		snprintf(node, sizeof(node), "%s/%s", dir, e->d_name);
		remove_job_in(node, prefix);
	}
	closedir(d);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || (!opt_image && !opt_name))
		return 0;
	if (opt_name) {
		if (use_named(sp) < 0) {
			if (!recorded) /* an import that failed has said why */
				record(sp, "the named container could not be used");
			return -1;
		}
	} else {
		if (import_image(sp) < 0) /* an unnamed container: imported by every step */
			return -1;
	}
	record(sp, image_root);
	return 0;
}

/* The step is over: it no longer runs in its named container. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_remote(sp) && run_file[0])
		unlink(run_file);
	return 0;
}

/* ---- the sandbox (task process, still root) --------------------------------------------------- */

static int mkdirs(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, mode) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static char newroot[CONF_MAX + 8];

static int fail(const char *what, const char *path)
{
	slurm_error("pyxis: couldn't start container: %s %s: %s", what, path, strerror(errno));
	return -1;
}

/* Binds SRC onto DST inside the new root (DST made as a directory or an empty file). */
static int bind_in(const char *src, const char *dst, int ro)
{
	char target[PATH_MAX];
	struct stat st;
	if (stat(src, &st) < 0)
		return fail("no such mount source", src);
	snprintf(target, sizeof(target), "%s%s", newroot, dst);
	if (S_ISDIR(st.st_mode)) {
		if (mkdirs(target, 0755) < 0)
			return fail("mkdir", target);
	} else {
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s", target);
		*strrchr(parent, '/') = '\0';
		if (mkdirs(parent, 0755) < 0)
			return fail("mkdir", parent);
		struct stat tst;
		if (stat(target, &tst) < 0) { /* a file to mount onto (an existing one may be read-only) */
			int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0)
				return fail("create", target);
			close(fd);
		}
	}
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
		return fail("bind", src);
	if (ro && mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) < 0)
		return fail("read-only remount", target);
	return 0;
}

static int tmpfs_in(const char *dst, const char *opts)
{
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s%s", newroot, dst);
	if (mkdirs(target, 0755) < 0)
		return fail("mkdir", target);
	if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return fail("tmpfs", target);
	return 0;
}

static int symlink_in(const char *to, const char *dst)
{
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s%s", newroot, dst);
	if (symlink(to, target) < 0 && errno != EEXIST)
		return fail("symlink", target);
	return 0;
}

/* --container-mounts: SRC:DST[:FLAGS], FLAGS joined by '+' (ro honoured, the rest accepted). */
static int user_mounts(void)
{
	char *copy, *save = NULL, *entry;
	int rc = 0;
	if (!opt_mounts)
		return 0;
	copy = strdup(opt_mounts);
	for (entry = strtok_r(copy, ",", &save); entry && rc == 0; entry = strtok_r(NULL, ",", &save)) {
		char *src = entry, *dst = strchr(entry, ':'), *flags = NULL;
		if (dst) {
			*dst++ = '\0';
			flags = strchr(dst, ':');
			if (flags)
				*flags++ = '\0';
		} else {
			dst = src;
		}
		int ro = flags && (strcmp(flags, "ro") == 0 || strncmp(flags, "ro+", 3) == 0 || strstr(flags, "+ro"));
		struct stat st;
		if (stat(src, &st) < 0) {
			slurm_error("pyxis: couldn't start container");
			slurm_error("pyxis: printing enroot log file:");
			slurm_error("pyxis:     enroot-mount: failed to mount: %s at %s%s: No such file or directory", src,
				    newroot, dst);
			rc = -1;
		} else {
			rc = bind_in(src, dst, ro);
		}
	}
	free(copy);
	return rc;
}

static int build_root(spank_t sp)
{
	char path[PATH_MAX + CONF_MAX], node[256] = "";
	static const char *devs[] = { "null", "zero", "full", "random", "urandom", "tty" };

	snprintf(newroot, sizeof(newroot), "%s/.root", images_dir);
	if (unshare(CLONE_NEWNS) < 0)
		return fail("unshare", "mount namespace");
	/* Nothing of this namespace's mounts may reach the node's (in a chroot "/" is no mount point,
	 * EINVAL: the testbed's mounts are private, and the new root is made private below). */
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (mkdirs(newroot, 0755) < 0)
		return fail("mkdir", newroot);
	if (mount("tmpfs", newroot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return fail("tmpfs", newroot);
	mount(NULL, newroot, NULL, MS_REC | MS_PRIVATE, NULL);

	snprintf(path, sizeof(path), "%s/%s/etc", images_dir, image_root);
	if (bind_in("/usr", "/usr", 1) < 0 || tmpfs_in("/usr/local", "mode=0755") < 0 || bind_in(path, "/etc", 1) < 0)
		return -1;
	if (symlink_in("usr/bin", "/bin") < 0 || symlink_in("usr/sbin", "/sbin") < 0 ||
	    symlink_in("usr/lib", "/lib") < 0 || symlink_in("usr/lib64", "/lib64") < 0)
		return -1;
	const char *etc_files[] = { "/etc/passwd", "/etc/group", "/etc/hosts" };
	for (size_t i = 0; i < 3; i++)
		if (access(etc_files[i], R_OK) == 0 && bind_in(etc_files[i], etc_files[i], 1) < 0)
			return -1;
	snprintf(path, sizeof(path), "%s/proc", newroot);
	if (mkdirs(path, 0555) < 0 || mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return fail("proc", path);
	if (bind_in("/sys", "/sys", 1) < 0)
		return -1;
	if (tmpfs_in("/dev", "mode=0755") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(path, sizeof(path), "/dev/%s", devs[i]);
		if (bind_in(path, path, 0) < 0)
			return -1;
	}
	if (bind_in("/dev/pts", "/dev/pts", 0) < 0 || tmpfs_in("/dev/shm", "mode=1777") < 0)
		return -1;
	if (symlink_in("/proc/self/fd", "/dev/fd") < 0 || symlink_in("/proc/self/fd/0", "/dev/stdin") < 0 ||
	    symlink_in("/proc/self/fd/1", "/dev/stdout") < 0 || symlink_in("/proc/self/fd/2", "/dev/stderr") < 0)
		return -1;
	if (tmpfs_in("/tmp", "mode=1777") < 0 || tmpfs_in("/var/tmp", "mode=1777") < 0 || tmpfs_in("/run", "mode=0755") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/home", newroot);
	mkdirs(path, 0755);

	/* The GPUs, as enroot's NVIDIA hook exposes them: nvidia-smi, its state, the node's devices. */
	if (access(nvidia_smi, X_OK) == 0) {
		char state[CONF_MAX + 8], src[CONF_MAX + 300];
		if (bind_in(nvidia_smi, "/usr/local/bin/nvidia-smi", 1) < 0)
			return -1;
		snprintf(state, sizeof(state), "%s/gpu", state_dir);
		if (strcmp(image_root, "nogpu") == 0)
			snprintf(src, sizeof(src), "%s/container/nogpu/gpu", state_dir);
		else
			snprintf(src, sizeof(src), "%s", state);
		if (access(src, R_OK) == 0 && bind_in(src, state, 1) < 0)
			return -1;
		node_name(sp, node, sizeof(node));
		if (strcmp(image_root, "nogpu") != 0 && node[0]) {
			for (int i = 0; i < 64; i++) {
				char dev[64];
				snprintf(src, sizeof(src), "%s/dev/%s/nvidia%d", state_dir, node, i);
				if (access(src, F_OK) < 0)
					break;
				snprintf(dev, sizeof(dev), "/dev/nvidia%d", i);
				if (bind_in(src, dev, 0) < 0)
					return -1;
			}
		}
	}
	if (user_mounts() < 0)
		return -1;
	/* Slurm chdirs the task to the step's cwd after this hook: an empty directory there keeps it
	 * from "couldn't chdir ... going to /tmp instead"; task_init then moves to the workdir. */
	if (outer_cwd[0] == '/') {
		char target[sizeof(newroot) + sizeof(outer_cwd)];
		snprintf(target, sizeof(target), "%s%s", newroot, outer_cwd);
		mkdirs(target, 0755);
	}
	if (mount(NULL, newroot, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return fail("read-only remount", newroot);
	if (chdir(newroot) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return fail("chroot", newroot);
	return 0;
}

/* The image's ENV (rv-image.env beside its root) over the job's values, except the names
 * --container-env lists that the job has (Pyxis keeps those from the host). */
static void image_env(spank_t sp)
{
	char path[CONF_MAX + 128], line[PATH_MAX], have[8];
	snprintf(path, sizeof(path), "%s/%s/rv-image.env", images_dir, image_root);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		line[strcspn(line, "\n")] = '\0';
		if (!eq || eq == line)
			continue;
		*eq = '\0';
		if (opt_env && spank_getenv(sp, line, have, sizeof(have)) != ESPANK_ENV_NOEXIST) {
			char list[PATH_MAX], *save = NULL, *n;
			int kept = 0;
			snprintf(list, sizeof(list), "%s", opt_env);
			for (n = strtok_r(list, ",", &save); n && !kept; n = strtok_r(NULL, ",", &save))
				kept = strcmp(n, line) == 0;
			if (kept)
				continue;
		}
		spank_setenv(sp, line, eq + 1, 1);
	}
	fclose(f);
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !image_root[0])
		return 0;
	image_env(sp);
	if (!getcwd(outer_cwd, sizeof(outer_cwd)))
		outer_cwd[0] = '\0';
	return build_root(sp);
}

/* As the user, just before exec: the working directory inside. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !image_root[0])
		return 0;
	if (opt_workdir) {
		if (chdir(opt_workdir) < 0) {
			slurm_error("pyxis: couldn't chdir to %s: %s", opt_workdir, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* No --container-workdir: the image's working directory, "/" for these images (as enroot). */
	return chdir("/") < 0 ? -1 : 0;
}
