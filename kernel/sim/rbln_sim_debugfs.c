// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulator's fault injection, in the core's debugfs directory of the
 * device, /sys/kernel/debug/rbln/rbln<index>/:
 *   fail_next_jobs   N: the next N jobs on any engine fail with -EIO
 *   hang             "CHIPLET ENGINE [0|1]": the engine stops finishing jobs
 *                    (1, the default) or recovers (0); a job that waits longer
 *                    than job_timeout_ms is cancelled and the engine reset
 *   chiplet_down     "CHIPLET [0|1]": the chiplet goes offline (1) or back (0)
 *   memory_error     "CHIPLET": an uncorrectable memory error: status FAULT
 *   copy_bench       "buffers SRC_FD DST_FD", then N (64 MiB at most): the
 *                    kernel copies the first N bytes of two exported buffers
 *                    as an engine would, outside the job path (make bench's
 *                    baseline)
 *   slow_us          N: every MiB an engine copies takes N microseconds longer
 *                    (0, the default: full speed); slowed engines run no job
 *                    inside SUBMIT
 *   no_direct        1: no job runs inside SUBMIT, every one goes through its
 *                    engine's scheduler (0, the default: idle engines run
 *                    jobs at once); for tests and figures of the scheduled path
 * ENGINE is a name from chipletN/engines or its number in enum drm_rbln_engine.
 */
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_print.h>

#include "../rbln_compat.h"
#include "rbln_sim.h"

static int rbln_parse_engine(const char *word, unsigned int *kind)
{
	unsigned int k;

	for (k = 0; k < DRM_RBLN_ENGINE_COUNT; k++)
		if (!strcmp(word, rbln_engine_name(k))) {
			*kind = k;
			return 0;
		}
	return kstrtouint(word, 0, kind) || *kind >= DRM_RBLN_ENGINE_COUNT ? -EINVAL : 0;
}

static int rbln_parse_chiplet(const struct rbln_device *rdev, const char *word, unsigned int *chiplet)
{
	return kstrtouint(word, 0, chiplet) || *chiplet >= rbln_device_chiplets(rdev) ? -EINVAL : 0;
}

/* An optional trailing "0" or "1"; @on keeps its default without one. */
static int rbln_parse_switch(int argc, char **argv, int at, unsigned int *on)
{
	if (argc <= at)
		return 0;
	return kstrtouint(argv[at], 0, on) || *on > 1 ? -EINVAL : 0;
}

static int rbln_sim_parse_hang(const struct rbln_device *rdev, const char *cmd,
			       unsigned int *chiplet, unsigned int *kind, unsigned int *on)
{
	int argc, ret = -EINVAL;
	char **argv = argv_split(GFP_KERNEL, cmd, &argc);

	if (!argv)
		return -ENOMEM;
	*on = 1;
	if (argc >= 2 && argc <= 3 && !rbln_parse_chiplet(rdev, argv[0], chiplet) &&
	    !rbln_parse_engine(argv[1], kind) && !rbln_parse_switch(argc, argv, 2, on) &&
	    rbln_device_has_engine(rdev, *chiplet, *kind))
		ret = 0;
	argv_free(argv);
	return ret;
}

static int rbln_sim_parse_chiplet_down(const struct rbln_device *rdev, const char *cmd,
				       unsigned int *chiplet, unsigned int *down)
{
	int argc, ret = -EINVAL;
	char **argv = argv_split(GFP_KERNEL, cmd, &argc);

	if (!argv)
		return -ENOMEM;
	*down = 1;
	if (argc >= 1 && argc <= 2 && !rbln_parse_chiplet(rdev, argv[0], chiplet) &&
	    !rbln_parse_switch(argc, argv, 1, down))
		ret = 0;
	argv_free(argv);
	return ret;
}

/* Reads a short command line from user space into @buf. */
static int rbln_read_command(const char __user *ubuf, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return 0;
}

static ssize_t rbln_hang_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet, kind, on;
	char buf[64];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = rbln_sim_parse_hang(rdev, buf, &chiplet, &kind, &on);
	if (ret)
		return ret;
	rbln_sim_set_hang(rdev, chiplet, kind, on);
	return len;
}

static ssize_t rbln_chiplet_down_write(struct file *f, const char __user *ubuf, size_t len,
				       loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet, down;
	char buf[32];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = rbln_sim_parse_chiplet_down(rdev, buf, &chiplet, &down);
	if (ret)
		return ret;
	rbln_sim_set_chiplet_down(rdev, chiplet, down);
	return len;
}

static ssize_t rbln_memory_error_write(struct file *f, const char __user *ubuf, size_t len,
				       loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet;
	char buf[32];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (rbln_parse_chiplet(rdev, strim(buf), &chiplet))
		return -EINVAL;
	rbln_hw_memory_error(rdev, chiplet);
	return len;
}

/*
 * copy_bench: make bench's baseline for what the job path adds.  A write of
 * "buffers SRC_FD DST_FD" takes two exported buffers (dma-buf fds of the
 * writer), and each write of N (RBLN_COPY_BENCH_MAX at most, make bench's
 * largest transfer) then copies their first N bytes, as an engine copies a
 * job's bytes, outside the job path.  The baseline copies the very
 * memory the bench's jobs copy: under TCG a copy's speed depends on where its
 * pages lie (16 MiB ran at 2.6 GiB/s between two buffers and at 4.2 between
 * two others in one run), which a baseline of other buffers would carry.
 */
#define RBLN_COPY_BENCH_MAX	SZ_64M

struct rbln_copy_bench {
	struct mutex lock;		/* the buffers */
	struct dma_buf *src, *dst;
	struct iosys_map src_map, dst_map;
};

static int rbln_copy_bench_open(struct inode *inode, struct file *f)
{
	struct rbln_copy_bench *b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);

	if (!b)
		return -ENOMEM;
	mutex_init(&b->lock);
	f->private_data = b;
	return 0;
}

static void rbln_copy_bench_drop(struct dma_buf **buf, struct iosys_map *map)
{
	if (!*buf)
		return;
	if (!iosys_map_is_null(map))
		rbln_dma_buf_vunmap(*buf, map);
	iosys_map_clear(map);
	dma_buf_put(*buf);
	*buf = NULL;
}

/* The exported buffer of @fd, mapped for the CPU (not I/O memory). */
static int rbln_copy_bench_take(int fd, struct dma_buf **buf, struct iosys_map *map)
{
	int ret;

	*buf = dma_buf_get(fd);
	if (IS_ERR(*buf)) {
		ret = PTR_ERR(*buf);
		*buf = NULL;
		return ret;
	}
	ret = rbln_hw_dmabuf_vmap(*buf, map);
	if (!ret && map->is_iomem)
		ret = -EOPNOTSUPP;
	if (ret)
		rbln_copy_bench_drop(buf, map);
	return ret;
}

/* "buffers SRC_FD DST_FD": the new pair replaces the old one only once both are mapped. */
static int rbln_copy_bench_buffers(struct rbln_copy_bench *b, char *command)
{
	struct iosys_map src_map = {}, dst_map = {};
	struct dma_buf *src = NULL, *dst = NULL;
	int argc, src_fd, dst_fd, ret;
	char **argv;

	argv = argv_split(GFP_KERNEL, command, &argc);
	if (!argv)
		return -ENOMEM;
	ret = argc == 3 && !kstrtoint(argv[1], 0, &src_fd) && !kstrtoint(argv[2], 0, &dst_fd) ?
	      0 : -EINVAL;
	argv_free(argv);
	if (!ret)
		ret = rbln_copy_bench_take(src_fd, &src, &src_map);
	if (!ret)
		ret = rbln_copy_bench_take(dst_fd, &dst, &dst_map);
	if (ret) {
		rbln_copy_bench_drop(&src, &src_map);
		return ret;
	}
	rbln_copy_bench_drop(&b->src, &b->src_map);
	rbln_copy_bench_drop(&b->dst, &b->dst_map);
	b->src = src;
	b->src_map = src_map;
	b->dst = dst;
	b->dst_map = dst_map;
	return 0;
}

static ssize_t rbln_copy_bench_write(struct file *f, const char __user *ubuf, size_t len,
				     loff_t *pos)
{
	struct rbln_copy_bench *b = f->private_data;
	char buf[48];
	int ret;
	u64 n;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	ret = mutex_lock_interruptible(&b->lock);
	if (ret)
		return ret;
	if (!strncmp(buf, "buffers ", 8))
		ret = rbln_copy_bench_buffers(b, buf);
	else if (kstrtou64(buf, 0, &n) || !n || n > RBLN_COPY_BENCH_MAX)
		ret = -EINVAL;
	else if (!b->src)
		ret = -ENXIO;		/* no buffers given yet */
	else if (n > b->src->size || n > b->dst->size)
		ret = -EINVAL;
	else
		rbln_sim_copy(NULL, NULL, b->dst_map.vaddr, b->src_map.vaddr, n);
	mutex_unlock(&b->lock);
	return ret ?: len;
}

static int rbln_copy_bench_release(struct inode *inode, struct file *f)
{
	struct rbln_copy_bench *b = f->private_data;

	rbln_copy_bench_drop(&b->src, &b->src_map);
	rbln_copy_bench_drop(&b->dst, &b->dst_map);
	mutex_destroy(&b->lock);
	kfree(b);
	return 0;
}

static const struct file_operations rbln_copy_bench_fops = {
	.owner = THIS_MODULE,
	.open = rbln_copy_bench_open,
	.write = rbln_copy_bench_write,
	.release = rbln_copy_bench_release,
};

#define RBLN_DEBUGFS_WO(_name)						\
static const struct file_operations rbln_##_name##_fops = {		\
	.owner = THIS_MODULE,						\
	.open = simple_open,						\
	.write = rbln_##_name##_write,					\
}

RBLN_DEBUGFS_WO(hang);
RBLN_DEBUGFS_WO(chiplet_down);
RBLN_DEBUGFS_WO(memory_error);

void rbln_sim_debugfs_init(struct rbln_sim_device *sdev)
{
	struct rbln_device *rdev = sdev->rdev;
	struct dentry *dir = rbln_device_debugfs_dir(rdev);

	if (!dir)
		return;
	debugfs_create_atomic_t("fail_next_jobs", 0600, dir, &sdev->fail_next_jobs);
	debugfs_create_atomic_t("fail_next_resets", 0600, dir, &sdev->fail_next_resets);
	debugfs_create_u32("slow_us", 0600, dir, &sdev->slow_us);
	debugfs_create_bool("no_direct", 0600, dir, &sdev->no_direct);
	debugfs_create_file("hang", 0200, dir, rdev, &rbln_hang_fops);
	debugfs_create_file("chiplet_down", 0200, dir, rdev, &rbln_chiplet_down_fops);
	debugfs_create_file("memory_error", 0200, dir, rdev, &rbln_memory_error_fops);
	debugfs_create_file("copy_bench", 0200, dir, NULL, &rbln_copy_bench_fops);
}
