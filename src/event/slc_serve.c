/*
 * A small server's connections (slc_serve.h).
 */

#include "slc_core.h"
#include "slc_serve.h"

static void
slc_serve_free(void *arg)
{
    slc_serve_conn_t *c = arg;

    if (c->serve->release != NULL) {
        c->serve->release(c);
    }
    free(c);
}

static void
slc_serve_expire(slc_timer_t *t)
{
    slc_serve_close(t->data);
}

void
slc_serve_arm(slc_serve_conn_t *c)
{
    if (c->deadline.armed) {
        slc_timer_del(slc_loop, &c->deadline);
    }
    slc_timer_add(slc_loop, &c->deadline, c->serve->timeout_ms);
}

slc_serve_conn_t *
slc_serve_add(slc_serve_t *s, int fd)
{
    slc_serve_conn_t *c;

    if (s->quitting || s->nconns >= s->max
        || (c = calloc(1, s->size)) == NULL)
    {
        close(fd);
        return NULL;
    }
    c->conn = (slc_conn_t) { .fd = fd, .on_read = s->on_io,
                             .on_write = s->on_io, .data = c };
    c->serve = s;
    c->deadline.handler = slc_serve_expire;
    c->deadline.data = c;
    if (slc_conn_register(slc_loop, &c->conn) != SLC_OK) {
        close(fd);
        free(c);
        return NULL;
    }
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    slc_serve_arm(c);
    return c;
}

void
slc_serve_close(slc_serve_conn_t *c)
{
    slc_serve_conn_t **pp;

    if (c->closed) {
        return;
    }
    for (pp = &c->serve->conns; *pp != c; pp = &(*pp)->next) {
        /* find it */
    }
    *pp = c->next;
    c->serve->nconns--;
    c->closed = 1;
    if (c->deadline.armed) {
        slc_timer_del(slc_loop, &c->deadline);
    }
    slc_conn_unregister(slc_loop, &c->conn);
    slc_conn_close(&c->conn);
    if (slc_loop_defer(slc_loop, &c->release, slc_serve_free, c) != SLC_OK) {
        slc_serve_free(c);
    }
}

void
slc_serve_quit(slc_serve_t *s)
{
    slc_serve_conn_t *c, *next;

    s->quitting = 1;
    for (c = s->conns; c != NULL; c = next) {
        next = c->next;
        if (s->writing != NULL && s->writing(c)) {
            c->closing = 1;
        } else {
            slc_serve_close(c);         /* idle: nothing to finish */
        }
    }
}
