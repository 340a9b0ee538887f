/*
 * Handover channels (contract in slc_channel.h).  The master creates and
 * holds them; a worker reads its slot's from its loop until it quits, and
 * then sends into the channel of the slot that takes over.
 */

#include "slc_core.h"
#include "slc_channel.h"
#include "slc_event.h"
#include "slc_log.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#define SLC_CHANNEL_MAGIC  0x534c4348u      /* "SLCH" */
#define SLC_CHANNEL_BATCH  64               /* messages per wakeup */

/* Written by the master, read by every worker (MAP_SHARED, before fork). */
typedef struct {
    uint32_t  nslots;       /* worker_processes of the running cycle */
    uint32_t  stopping;
} slc_channel_shared_t;

/* The core's header of every message. */
typedef struct {
    uint32_t  magic;
    uint32_t  module;       /* index in slc_modules[] (one binary) */
} slc_channel_hdr_t;

static int                  (*slc_channels)[2];  /* [0] read, [1] send */
static unsigned               slc_nchannels;
static slc_channel_shared_t  *slc_channel_shared;
static slc_conn_t             slc_channel_conn = { .fd = -1 };
static uint8_t                slc_channel_buf[sizeof(slc_channel_hdr_t)
                                              + SLC_CHANNEL_MAX_MSG];

static int
slc_channel_map(void)
{
    void *p;

    if (slc_channel_shared != NULL) {
        return SLC_OK;
    }
    p = mmap(NULL, sizeof(slc_channel_shared_t), PROT_READ | PROT_WRITE,
        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        slc_log_errno(SLC_LOG_ALERT, errno, "mmap() of the handover page "
            "failed: sessions are not handed over on reload");
        return SLC_ERROR;
    }
    slc_channel_shared = p;
    return SLC_OK;
}

int
slc_channel_grow(unsigned n)
{
    int (*tab)[2];

    if (n <= slc_nchannels) {
        return SLC_OK;
    }
    if (slc_channel_map() != SLC_OK) {
        return SLC_ERROR;
    }
    tab = reallocarray(slc_channels, n, sizeof(*tab));
    if (tab == NULL) {
        slc_log(SLC_LOG_ALERT, "out of memory for handover channels");
        return SLC_ERROR;
    }
    slc_channels = tab;
    while (slc_nchannels < n) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK
                       | SOCK_CLOEXEC, 0, slc_channels[slc_nchannels]) == -1)
        {
            slc_log_errno(SLC_LOG_ALERT, errno, "socketpair() for the "
                "handover channel of slot %u failed", slc_nchannels);
            return SLC_ERROR;
        }
        slc_nchannels++;
    }
    return SLC_OK;
}

void
slc_channel_publish(unsigned nslots)
{
    if (slc_channel_shared != NULL) {
        __atomic_store_n(&slc_channel_shared->nslots, nslots,
            __ATOMIC_RELEASE);
    }
}

void
slc_channel_stop(void)
{
    if (slc_channel_shared != NULL) {
        __atomic_store_n(&slc_channel_shared->stopping, 1, __ATOMIC_RELEASE);
    }
}

void
slc_channel_close_all(void)
{
    for (unsigned i = 0; i < slc_nchannels; i++) {
        close(slc_channels[i][0]);
        close(slc_channels[i][1]);
    }
    slc_nchannels = 0;
}

/* The slot whose worker takes over from `slot`'s. */
static unsigned
slc_channel_target(unsigned slot)
{
    unsigned n = __atomic_load_n(&slc_channel_shared->nslots,
                     __ATOMIC_ACQUIRE);

    return n == 0 || slot < n ? slot : slot % n;
}

int
slc_channel_enabled(unsigned slot)
{
    return slc_channel_shared != NULL
           && !__atomic_load_n(&slc_channel_shared->stopping,
                  __ATOMIC_ACQUIRE)
           && slot < slc_nchannels
           && slc_channel_target(slot) < slc_nchannels;
}

static void
slc_channel_close_fds(const int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        close(fds[i]);
    }
}

/* The descriptors that came with a message (MSG_CMSG_CLOEXEC). */
static unsigned
slc_channel_fds(struct msghdr *mh, int *fds)
{
    unsigned n = 0;

    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL;
         cm = CMSG_NXTHDR(mh, cm))
    {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (n < SLC_CHANNEL_MAX_FDS) {
                fds[n++] = fd;
            } else {
                close(fd);
            }
        }
    }
    return n;
}

/* One message: to its module, which owns the descriptors from then on. */
static void
slc_channel_dispatch(struct msghdr *mh, size_t len)
{
    int                fds[SLC_CHANNEL_MAX_FDS];
    unsigned           nfds = slc_channel_fds(mh, fds);
    slc_channel_hdr_t  h;
    slc_module_t      *m = NULL;

    if (mh->msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
        /* MSG_CTRUNC: out of descriptors (EMFILE); the kernel closed
           those it could not give us, so the session cannot go on */
        slc_log(SLC_LOG_ERR, "a session handed over by a reload was lost: "
            "%s", (mh->msg_flags & MSG_CTRUNC) ? "out of file descriptors "
            "(raise worker_rlimit_nofile)" : "message too long");
        slc_channel_close_fds(fds, nfds);
        return;
    }
    if (len >= sizeof(h)) {
        memcpy(&h, slc_channel_buf, sizeof(h));
        if (h.magic == SLC_CHANNEL_MAGIC && h.module < slc_module_count()) {
            m = slc_modules[h.module];
        }
    }
    if (m == NULL || m->handover_recv == NULL) {
        slc_log(SLC_LOG_ALERT, "bad message on the handover channel");
        slc_channel_close_fds(fds, nfds);
        return;
    }
    m->handover_recv(fds, nfds, slc_channel_buf + sizeof(h),
        len - sizeof(h));
}

static void
slc_channel_read(slc_conn_t *c)
{
    union {
        struct cmsghdr  align;
        char            buf[CMSG_SPACE(SLC_CHANNEL_MAX_FDS * sizeof(int))];
    } cmsg;
    struct iovec   iov;
    struct msghdr  mh;
    ssize_t        n;

    for (int i = 0; i < SLC_CHANNEL_BATCH && c->fd != -1; i++) {
        iov = (struct iovec) { slc_channel_buf, sizeof(slc_channel_buf) };
        mh = (struct msghdr) { .msg_iov = &iov, .msg_iovlen = 1,
            .msg_control = cmsg.buf, .msg_controllen = sizeof(cmsg.buf) };
        n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n == -1) {
            if (errno != EAGAIN && errno != EINTR) {
                slc_log_errno(SLC_LOG_ALERT, errno, "recvmsg() on the "
                    "handover channel failed");
            }
            return;
        }
        slc_channel_dispatch(&mh, (size_t) n);
        /* the message may hold secrets of the session (its module's) */
        explicit_bzero(slc_channel_buf, (size_t) n);
    }
}

void
slc_channel_listen(unsigned slot)
{
    if (slc_channel_shared == NULL || slot >= slc_nchannels) {
        return;
    }
    slc_channel_conn.fd = slc_channels[slot][0];
    slc_channel_conn.on_read = slc_channel_read;
    if (slc_conn_register_listen(slc_loop, &slc_channel_conn, 0) != SLC_OK)
    {
        slc_log_errno(SLC_LOG_ALERT, errno, "epoll_ctl() for the handover "
            "channel failed: sessions handed over by a reload wait for "
            "this slot's next worker");
        slc_channel_conn.fd = -1;
    }
}

void
slc_channel_unlisten(void)
{
    if (slc_channel_conn.fd != -1) {
        slc_conn_unregister(slc_loop, &slc_channel_conn);
        slc_channel_conn.fd = -1;
    }
}

size_t
slc_channel_pending(void)
{
    int n = 0;

    if (slc_channel_conn.fd == -1
        || ioctl(slc_channel_conn.fd, SIOCINQ, &n) == -1)
    {
        return 0;
    }
    return n > 0 ? (size_t) n : 0;
}

int
slc_channel_send(unsigned slot, const slc_module_t *m, const void *msg,
    size_t len, const int *fds, unsigned nfds)
{
    union {
        struct cmsghdr  align;
        char            buf[CMSG_SPACE(SLC_CHANNEL_MAX_FDS * sizeof(int))];
    } cmsg;
    slc_channel_hdr_t  h = { SLC_CHANNEL_MAGIC,
                             (uint32_t) slc_module_index(m) };
    struct iovec       iov[2] = { { &h, sizeof(h) },
                                  { (void *) msg, len } };
    struct msghdr      mh = { .msg_iov = iov, .msg_iovlen = 2,
                              .msg_control = cmsg.buf,
                              .msg_controllen = CMSG_SPACE(nfds
                                                           * sizeof(int)) };
    struct cmsghdr    *cm;

    if (!slc_channel_enabled(slot) || nfds == 0 || nfds > SLC_CHANNEL_MAX_FDS
        || len > SLC_CHANNEL_MAX_MSG)
    {
        return SLC_ERROR;
    }
    memset(cmsg.buf, 0, sizeof(cmsg.buf));
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    if (sendmsg(slc_channels[slc_channel_target(slot)][1], &mh,
                MSG_DONTWAIT | MSG_NOSIGNAL) != -1)
    {
        return SLC_OK;
    }
    /* full (the receiver is slow), or too many descriptors in flight */
    if (errno == EAGAIN || errno == ENOBUFS || errno == ETOOMANYREFS
        || errno == EINTR)
    {
        return SLC_AGAIN;
    }
    slc_log_errno(SLC_LOG_ALERT, errno, "sendmsg() on the handover channel "
        "failed");
    return SLC_ERROR;
}
