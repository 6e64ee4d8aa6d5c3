/*
 * Copyright (C) by the ibmc authors.
 *     See COPYRIGHT in top-level directory
 */

/* Node-shared registered segments: creating, agreeing on and freeing them
 * (see ibmc_nodeseg.h for what they hold).
 *
 * The node's leader (its lowest rank in the communicator) creates a POSIX
 * shared-memory object with a job-unique name, mode 0600, and registers the
 * mapping; it passes the name to the other local processes, which map and
 * register it too (each in its own protection domain, so that any of them
 * can be the source or the target of RDMA); the name is unlinked as soon as
 * they have all answered, so nothing is left behind however the job ends.
 * Then every member contributes whether it succeeded, and each leader the
 * address and rkey of its node's segment: one MPIR allgather, after which
 * all members use the segments or all fall back. */

#include <mpidimpl.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ibmc_types.h"
#include "ibmc_util.h"
#include "ibmc_nodeseg_impl.h"
#include "ibmc_qp_fault.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_IBMC_NODE_SEG
      category    : CH4_IBMC
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The node-shared registered segments that the ibmc_node_rd allgather
        algorithm (MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ibmc_node_rd) uses.
        false turns them off entirely: no segment is created and the
        algorithm runs a stock one, counting each call in the
        ibmc_node_rd_fallbacks pvar.  All processes must agree.

    - name        : MPIR_CVAR_IBMC_NODE_SEG_SIZE
      category    : CH4_IBMC
      type        : int
      default     : 4194304
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The largest data area, in bytes, of a communicator's node segment for
        one call: an MPI_Allgather whose result (bytes per rank times ranks)
        is larger goes through it in pieces.  A segment is created on a
        communicator's first ibmc_node_rd call, sized to that call's result
        (at least 64 KiB), and grown, up to this size, when a later call
        needs more.  Its memory is twice the data area (calls alternate
        halves) plus a few KiB, once per node and communicator, and every
        process on the node registers all of it with the HCA, so each needs
        that much RLIMIT_MEMLOCK.  From 65536 to 1073741824; all processes
        must agree.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define NODESEG_MIN_HALF ((size_t) 64 * 1024)
#define NODESEG_MAX_HALF ((size_t) 1 << 30)
#define NODESEG_NAME_LEN 64

int MPIDI_IBMC_nodeseg_check_cvars(void)
{
    int v = MPIR_CVAR_IBMC_NODE_SEG_SIZE;
    if ((size_t) v < NODESEG_MIN_HALF || (size_t) v > NODESEG_MAX_HALF || v < 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                                    "MPIR_CVAR_IBMC_NODE_SEG_SIZE", v,
                                    "it must be from 65536 to 1073741824");
    if (MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN < 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                                    "MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN",
                                    MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN, "it must be 0 or more");
    if (MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN < 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                                    "MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN",
                                    MPIR_CVAR_IBMC_NODE_RD_MCAST_MIN, "it must be 0 or more");
    return MPI_SUCCESS;
}

static size_t page_round(size_t x)
{
    size_t pg = (size_t) sysconf(_SC_PAGESIZE);
    return (x + pg - 1) / pg * pg;
}

size_t MPIDI_IBMC_nodeseg_half_for(size_t bytes, int nranks, size_t cap, size_t grown_from)
{
    size_t pg = (size_t) sysconf(_SC_PAGESIZE);
    size_t need = bytes > cap / (size_t) nranks ? cap : bytes * (size_t) nranks;
    need = MPL_MAX(need, MPL_MAX(NODESEG_MIN_HALF, 4 * grown_from));
    return MPL_MIN(page_round(need), cap / pg * pg);
}

static size_t map_size(size_t half, int local_n)
{
    return page_round(2 * half + (2 * IBMC_NODERD_MAX_ROUNDS + 1) * IBMC_NODESEG_LINE +
                      (size_t) local_n * IBMC_NODESEG_LINE);
}

/* Map the object open on fd and register the mapping; 0 on success, else
 * why says what failed. */
static int map_and_register(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, int fd,
                            char *why, size_t whylen)
{
    void *p = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "mmap of %zu bytes: %s", s->map_size, strerror(errno));
        return -1;
    }
    s->base = p;
    s->mr = ibv_reg_mr(st->hca.pd, s->base, s->map_size,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!s->mr) {
        snprintf(why, whylen, "ibv_reg_mr of its %zu bytes: %s (see RLIMIT_MEMLOCK, "
                 "MPIR_CVAR_IBMC_NODE_SEG_SIZE)", s->map_size, strerror(errno));
        return -1;
    }
    /* who this process is, for the others' liveness checks */
    volatile uint64_t *line = MPIDI_IBMC_nodeseg_mark(s, s->my_local);
    line[1] = (uint64_t) getpid();
    line[2] = (uint64_t) st->my_rank;
    return 0;
}

/* A segment's name exists from its creation until every local process has
 * opened it, a short window in which a killed leader leaves the name behind.
 * The name carries the creator's pid: names of processes that no longer
 * exist are removed here, once per process, before it makes its first. */
static void sweep_stale(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        unsigned long long key;
        int pid;
        unsigned serial;
        char path[300];
        struct stat sb;
        if (sscanf(e->d_name, "ibmc-%16llx-%d-%u", &key, &pid, &serial) != 3 || pid <= 0)
            continue;
        snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
        if (stat(path, &sb) == 0 && sb.st_uid == geteuid() && kill(pid, 0) != 0 &&
            errno == ESRCH)
            shm_unlink(e->d_name);
    }
    if (d)
        closedir(d);
}

static int create_segment(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, const char *name,
                          int *created, char *why, size_t whylen)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    *created = 1;
    /* reserve the pages now: a full /dev/shm is a fallback here, not a
     * SIGBUS later */
    int rc = posix_fallocate(fd, 0, (off_t) s->map_size);
    if (rc) {
        snprintf(why, whylen, "reserving %zu bytes in %s: %s", s->map_size, name, strerror(rc));
        close(fd);
        return -1;
    }
    rc = map_and_register(st, s, fd, why, whylen);
    close(fd);
    return rc;
}

static int open_segment(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, const char *name,
                        char *why, size_t whylen)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    int rc = map_and_register(st, s, fd, why, whylen);
    close(fd);
    return rc;
}

static void unmap(MPIDI_IBMC_nodeseg_t * s)
{
    if (s->mr)
        ibv_dereg_mr(s->mr);
    if (s->base)
        munmap(s->base, s->map_size);
    s->mr = NULL;
    s->base = NULL;
}

static int world_of(MPIR_Comm * comm, int r)
{
    return MPIDI_IBMC_AV(MPIDIU_comm_rank_to_av(comm, r)).world_rank;
}

/* Node layout and this process's plan; 0, or -1 for want of memory. */
static int plan(MPIDI_IBMC_nodeseg_t * s, MPIR_Comm * comm)
{
    int n = comm->local_size, rc = -1;
    int *id = MPL_malloc(sizeof(int) * n, MPL_MEM_COLL);
    int *scratch = MPL_malloc(sizeof(int) * n, MPL_MEM_COLL);
    int *of = MPL_malloc(sizeof(int) * n, MPL_MEM_COLL);
    s->lay.pos_rank = MPL_malloc(sizeof(int) * n, MPL_MEM_COLL);
    s->lay.rank_pos = MPL_malloc(sizeof(int) * n, MPL_MEM_COLL);
    if (!id || !scratch || !of || !s->lay.pos_rank || !s->lay.rank_pos)
        goto done;
    for (int r = 0; r < n; r++)
        id[r] = MPIR_Process.node_map[world_of(comm, r)];
    s->nnodes = ibmc_noderd_number_nodes(n, id, of, scratch);
    s->lay.node_first = MPL_malloc(sizeof(int) * s->nnodes, MPL_MEM_COLL);
    s->lay.node_count = MPL_malloc(sizeof(int) * s->nnodes, MPL_MEM_COLL);
    s->targets = MPL_calloc(s->nnodes, sizeof(*s->targets), MPL_MEM_COLL);
    if (!s->lay.node_first || !s->lay.node_count || !s->targets ||
        ibmc_noderd_layout(&s->lay, n, of, s->nnodes))
        goto done;
    s->my_node = of[s->rank];
    s->local_n = s->lay.node_count[s->my_node];
    s->local_ranks = MPL_malloc(sizeof(int) * s->local_n, MPL_MEM_COLL);
    if (!s->local_ranks)
        goto done;
    /* a node's positions hold its ranks in increasing order */
    for (int i = 0; i < s->local_n; i++) {
        s->local_ranks[i] = s->lay.pos_rank[s->lay.node_first[s->my_node] + i];
        if (s->local_ranks[i] == s->rank)
            s->my_local = i;
    }
    for (int k = 0; k < s->nnodes; k++) {
        s->targets[k].seg = s;
        s->targets[k].world = world_of(comm, s->lay.pos_rank[s->lay.node_first[k]]);
    }
    s->nrounds = ibmc_noderd_rounds(&s->lay, s->my_node, s->rounds);

    /* The leaders' communicator for moving blocks by multicast: the
     * communicator itself when each node has one process; otherwise MPICH's
     * node_roots_comm, if MPICH's node numbering (by lowest rank, from the
     * CH4 node map) is this plan's, which every member checks alike. */
    if (s->nnodes == n) {
        s->mcast_ok = 1;
        s->leaders = comm;
    } else if (comm->hierarchy_kind == MPIR_COMM_HIERARCHY_KIND__PARENT && comm->internode_table) {
        s->mcast_ok = 1;
        for (int r = 0; r < n; r++)
            if (comm->internode_table[r] != of[r])
                s->mcast_ok = 0;
        /* then its rank j is node j's leader */
        s->leaders = s->mcast_ok && s->my_local == 0 ? comm->node_roots_comm : NULL;
    }
    rc = 0;
  done:
    MPL_free(id);
    MPL_free(scratch);
    MPL_free(of);
    return rc;
}

static int leader_of(MPIDI_IBMC_nodeseg_t * s, int node)
{
    return s->lay.pos_rank[s->lay.node_first[node]];
}

/* Wait until the RC connection to world rank `world` can carry RDMA. */
static int wait_connected(MPIDI_IBMC_state_t * st, int world)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IBMC_conn_t *conn = &st->conns[world];
    for (;;) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        int up = conn->cm.state == IBMC_CM_CONNECTED && !conn->need_rtu;
        int failed = conn->cm.state == IBMC_CM_FAILED;
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        if (up)
            break;
        if (failed)
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ibmc_connect",
                                 "**ibmc_connect %d %d", world, MPIR_CVAR_IBMC_CONNECT_TIMEOUT);
        mpi_errno = MPIDI_IBMC_wait_turn_unlocked();
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    return mpi_errno;
}

/* The RC connections the rounds use: each process that writes for its
 * node (the leader, or up to IBMC_NODESEG_SHARERS processes with shared
 * rounds) writes into the leader of each partner its node sends to, and a
 * leader reads a late writer's liveness word.  One message each way per
 * (writer, leader) pair and round opens them, all posted at once (each
 * side lists the pair as often as the other, so they match), then each is
 * waited for until RDMA can be posted. */
static int connect_writers(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s, MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS, n = 0, max = 2 * s->nrounds * (1 + IBMC_NODESEG_SHARERS);
    int *peers = MPL_malloc(sizeof(int) * (size_t) max, MPL_MEM_COLL);
    int *buf = MPL_malloc(sizeof(int) * 2 * (size_t) max, MPL_MEM_COLL);
    MPIR_Request **req = MPL_malloc(sizeof(*req) * 2 * (size_t) max, MPL_MEM_COLL);
    MPI_Status *stat = MPL_malloc(sizeof(*stat) * 2 * (size_t) max, MPL_MEM_COLL);
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_ERR_CHKANDJUMP(!peers || !buf || !req || !stat, mpi_errno, MPI_ERR_OTHER, "**nomem");
    int my_sharer = s->my_local < MPIDI_IBMC_nodeseg_sharers(s, s->my_node, SIZE_MAX);
    for (int r = 0; r < s->nrounds; r++) {
        const ibmc_noderd_round_t *rd = &s->rounds[r];
        if (my_sharer && rd->to >= 0)
            peers[n++] = leader_of(s, rd->to);
        if (s->my_local == 0 && rd->from >= 0)
            for (int k = 0; k < MPIDI_IBMC_nodeseg_sharers(s, rd->from, SIZE_MAX); k++)
                peers[n++] = s->lay.pos_rank[s->lay.node_first[rd->from] + k];
    }
    for (int i = 0; i < n; i++) {
        buf[i] = i;
        mpi_errno = MPIC_Isend(&buf[i], 1, MPI_INT, peers[i], MPIR_ALLGATHER_TAG, comm,
                               &req[2 * i], &errflag);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = MPIC_Irecv(&buf[max + i], 1, MPI_INT, peers[i],
                               MPIR_ALLGATHER_TAG, comm, &req[2 * i + 1]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = MPIC_Waitall(2 * n, req, stat, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < n; i++) {
        mpi_errno = wait_connected(st, world_of(comm, peers[i]));
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_fail:
    MPL_free(peers);
    MPL_free(buf);
    MPL_free(req);
    MPL_free(stat);
    return mpi_errno;
}

int MPIDI_IBMC_nodeseg_setup(MPIDI_IBMC_state_t * st, MPIR_Comm * comm, size_t bytes,
                             size_t grown_from, MPIDI_IBMC_nodeseg_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    struct member {
        uint32_t ok, rkey, probe_rkey, share_min;
        uint64_t addr, probe_addr;
        uint64_t bytes, half;
    } mine = { 0 }, *all = NULL;
    struct offer {
        int32_t ok;
        char name[NODESEG_NAME_LEN];
    } offer = { 0 };
    char name[NODESEG_NAME_LEN] = "";
    int created = 0;

    MPIDI_IBMC_nodeseg_t *s = MPL_calloc(1, sizeof(*s), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(!s, mpi_errno, MPI_ERR_OTHER, "**nomem");
    s->comm = comm;
    s->size = comm->local_size;
    s->rank = comm->rank;
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
    s->next = st->nodesegs;
    if (s->next)
        s->next->prev = s;
    st->nodesegs = s;
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
    comm->dev.ch4.netmod.ibmc.nodeseg = s;
    *out = s;

    /* Every member sees the same node map, but memory may run out on one:
     * all agree before anyone waits on another member, and fall back
     * together.  A stock algorithm directly: this may run inside
     * MPI_Allgather itself. */
    int planned = plan(s, comm) == 0 && !MPIDI_IBMC_qp_fault_nodeseg_nomem(st);
    all = MPL_malloc(sizeof(*all) * s->size, MPL_MEM_COLL);
    planned &= all != NULL;
    int all_planned = 0;
    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(&planned, &all_planned, 1, MPI_INT,
                                                        MPI_MIN, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (!all_planned) {
        snprintf(s->why, sizeof(s->why), "a member ran out of memory planning its segment");
        goto fn_exit;
    }
    if (s->nnodes < 2) {
        snprintf(s->why, sizeof(s->why), "all members are on one node");
        goto fn_exit;
    }
    s->cap = (size_t) MPIR_CVAR_IBMC_NODE_SEG_SIZE;
    s->share_min = (size_t) MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN;
    s->half = MPIDI_IBMC_nodeseg_half_for(bytes, s->size, s->cap, grown_from);
    s->map_size = map_size(s->half, s->local_n);

    int ok;
    char why[sizeof(s->why)] = "";
    if (s->my_local == 0) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        unsigned serial = st->nodeseg_names++;
        int sweep = !st->nodeseg_swept;
        st->nodeseg_swept = 1;
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        if (sweep)
            sweep_stale();
        snprintf(name, sizeof(name), "/ibmc-%016llx-%d-%u", (unsigned long long) st->job_key,
                 (int) getpid(), serial);
        ok = create_segment(st, s, name, &created, why, sizeof(why)) == 0;
        offer.ok = ok;
        snprintf(offer.name, sizeof(offer.name), "%s", name);
        for (int i = 1; i < s->local_n; i++) {
            mpi_errno = MPIC_Send(&offer, sizeof(offer), MPI_BYTE, s->local_ranks[i],
                                  MPIR_ALLGATHER_TAG, comm, &errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
        for (int i = 1; i < s->local_n; i++) {
            int32_t theirs = 0;
            mpi_errno = MPIC_Recv(&theirs, 1, MPI_INT32_T, s->local_ranks[i],
                                  MPIR_ALLGATHER_TAG, comm, MPI_STATUS_IGNORE, &errflag);
            MPIR_ERR_CHECK(mpi_errno);
            ok &= theirs != 0;
        }
        /* every local process has it open, or gave up */
        if (created)
            shm_unlink(name);
        created = 0;
    } else {
        mpi_errno = MPIC_Recv(&offer, sizeof(offer), MPI_BYTE, s->local_ranks[0],
                              MPIR_ALLGATHER_TAG, comm, MPI_STATUS_IGNORE, &errflag);
        MPIR_ERR_CHECK(mpi_errno);
        offer.name[sizeof(offer.name) - 1] = '\0';
        if (!offer.ok)
            snprintf(why, sizeof(why), "its node's leader could not create the segment");
        ok = offer.ok && open_segment(st, s, offer.name, why, sizeof(why)) == 0;
        int32_t answer = ok;
        mpi_errno = MPIC_Send(&answer, 1, MPI_INT32_T, s->local_ranks[0], MPIR_ALLGATHER_TAG,
                              comm, &errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!ok && why[0] && MPIR_CVAR_IBMC_STATS) {
        printf("ibmc-stats: rank %d cannot use its node segment: %s\n", st->my_rank, why);
        fflush(stdout);
    }

    /* all or none; the leaders' segments are named to everyone.  A stock
     * algorithm directly: this may run inside MPI_Allgather itself. */
    if (ok && (s->my_local == 0 || s->share_min) && !st->probe_mr) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
        if (!st->probe_mr)
            st->probe_mr = ibv_reg_mr(st->hca.pd, &st->probe_word, sizeof(st->probe_word),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
        if (!st->probe_mr) {
            ok = 0;
            if (MPIR_CVAR_IBMC_STATS)
                printf("ibmc-stats: rank %d cannot use its node segment: ibv_reg_mr of its "
                       "liveness word: %s\n", st->my_rank, strerror(errno));
        }
    }
    mine.ok = (uint32_t) ok;
    mine.bytes = bytes;
    mine.half = s->half;
    mine.share_min = (uint32_t) s->share_min;
    if (ok && s->my_local == 0) {
        mine.rkey = s->mr->rkey;
        mine.addr = (uint64_t) (uintptr_t) s->base;
    }
    if (ok && (s->my_local == 0 || s->share_min)) {
        mine.probe_rkey = st->probe_mr->rkey;
        mine.probe_addr = (uint64_t) (uintptr_t) & st->probe_word;
    }
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                            MPI_BYTE, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    for (int r = 0; r < s->size; r++) {
        /* the segments are sized from these, and a write lands at the
         * writer's offsets: they must be the same everywhere */
        if (all[r].bytes != bytes) {
            unmap(s);
            MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_ARG, "**ibmc_allgather_len",
                                 "**ibmc_allgather_len %d", r);
        }
        if (all[r].half != s->half) {
            unmap(s);
            MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                                 "MPIR_CVAR_IBMC_NODE_SEG_SIZE", MPIR_CVAR_IBMC_NODE_SEG_SIZE,
                                 "every process of a communicator must use the same value");
        }
        if (all[r].share_min != mine.share_min) {
            unmap(s);
            MPIR_ERR_SETANDJUMP3(mpi_errno, MPI_ERR_OTHER, "**ibmc_cvar", "**ibmc_cvar %s %d %s",
                                 "MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN",
                                 MPIR_CVAR_IBMC_NODE_RD_SHARE_MIN,
                                 "every process of a communicator must use the same value");
        }
    }
    for (int r = 0; r < s->size; r++) {
        if (!all[r].ok) {
            snprintf(s->why, sizeof(s->why), "rank %d could not map or register its node's "
                     "segment of %zu bytes", r, s->map_size);
            unmap(s);
            goto fn_exit;
        }
    }
    for (int k = 0; k < s->nnodes; k++) {
        int leader = leader_of(s, k);
        s->targets[k].addr = all[leader].addr;
        s->targets[k].rkey = all[leader].rkey;
        s->targets[k].probe_addr = all[leader].probe_addr;
        s->targets[k].probe_rkey = all[leader].probe_rkey;
    }
    if (s->share_min) {
        s->members = MPL_calloc(s->size, sizeof(*s->members), MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP(!s->members, mpi_errno, MPI_ERR_OTHER, "**nomem");
        for (int r = 0; r < s->size; r++) {
            s->members[r].seg = s;
            s->members[r].world = world_of(comm, r);
            s->members[r].probe_addr = all[r].probe_addr;
            s->members[r].probe_rkey = all[r].probe_rkey;
        }
    }
    mpi_errno = connect_writers(st, s, comm);
    MPIR_ERR_CHECK(mpi_errno);
    s->ready = 1;

  fn_exit:
    if (created)
        shm_unlink(name);
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Detach from the communicator a segment that RDMA may still use. */
static int keep_until_finalize(MPIDI_IBMC_nodeseg_t * s)
{
    if (s->writes_inflight <= 0 || !MPIDI_IBMC_STATE() || !MPIDI_IBMC_STATE()->conns)
        return 0;
    if (s->comm)
        s->comm->dev.ch4.netmod.ibmc.nodeseg = NULL;
    s->comm = NULL;
    s->ready = 0;
    return 1;
}

void MPIDI_IBMC_nodeseg_free(MPIDI_IBMC_state_t * st, MPIDI_IBMC_nodeseg_t * s)
{
    if (keep_until_finalize(s))
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        st->nodesegs = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (s->comm)
        s->comm->dev.ch4.netmod.ibmc.nodeseg = NULL;
    unmap(s);
    MPL_free(s->local_ranks);
    MPL_free(s->lay.pos_rank);
    MPL_free(s->lay.rank_pos);
    MPL_free(s->lay.node_first);
    MPL_free(s->lay.node_count);
    MPL_free(s->targets);
    MPL_free(s->members);
    MPL_free(s);
}

int MPIDI_IBMC_nodeseg_completion(MPIDI_IBMC_state_t * st, const struct ibv_wc *wc)
{
    MPIDI_IBMC_nodeseg_target_t *t = MPIDI_IBMC_WR_OWNER(wc->wr_id, MPIDI_IBMC_nodeseg_target_t,
                                                         wr);
    if (wc->status != IBV_WC_SUCCESS)
        return MPIDI_IBMC_wc_error("node-segment RDMA write or read", t->world, wc);
    st->conns[t->world].sq_inflight--;
    t->seg->writes_inflight--;
    return MPI_SUCCESS;
}

int MPIDI_IBMC_nodeseg_comm_free(MPIR_Comm * comm)
{
    MPIDI_IBMC_state_t *st = MPIDI_IBMC_STATE();
    MPIDI_IBMC_nodeseg_t *s = comm->dev.ch4.netmod.ibmc.nodeseg;
    if (s && st)
        MPIDI_IBMC_nodeseg_free(st, s);
    comm->dev.ch4.netmod.ibmc.nodeseg = NULL;
    return MPI_SUCCESS;
}

void MPIDI_IBMC_nodeseg_finalize(MPIDI_IBMC_state_t * st)
{
    /* communicators the application never freed, and segments kept for
     * RDMA that a failed call left in flight (whose queue pairs are about to
     * go: nothing will complete any more) */
    while (st->nodesegs) {
        st->nodesegs->writes_inflight = 0;
        MPIDI_IBMC_nodeseg_free(st, st->nodesegs);
    }
}
