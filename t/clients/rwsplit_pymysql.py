"""The PyMySQL client of t/rwsplit_pymysql.t.

    python3 rwsplit_pymysql.py PORT TABLE ID DB

Each step prints one line "STEP VALUE" or "STEP ERR message", so that
the test sees how far it went; the timeouts turn a hang into an error.
"""

import sys

import pymysql

port, table, row_id, db = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), \
    sys.argv[4]


def connect(**kw):
    return pymysql.connect(host='127.0.0.1', port=port, user='app',
                           password='secret', database='test',
                           connect_timeout=5, read_timeout=8,
                           write_timeout=8, **kw)


def step(name, fn):
    try:
        v = fn()
    except Exception as e:  # noqa: BLE001 -- any failure is reported
        v = 'ERR %s' % str(e).replace('\n', ' ')
    print(name, v, flush=True)


def one(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return ' '.join(str(x) for x in cur.fetchone())


def call(conn):
    sets = []
    with conn.cursor() as cur:
        cur.execute('CALL rws_two()')
        while True:
            if cur.description:
                sets.extend(','.join(str(x) for x in r)
                            for r in cur.fetchall())
            if not cur.nextset():
                break
    return ' '.join(sets)


def select_db(conn):
    conn.select_db(db)
    v = one(conn, 'SELECT DATABASE(), @@server_id')
    conn.select_db('test')
    return v


def ping(conn):
    conn.ping(reconnect=False)
    return one(conn, 'SELECT @@server_id')


def transaction(conn):
    conn.begin()
    v = one(conn, 'SELECT @@server_id')
    conn.commit()
    return v


def write_read(conn):
    with conn.cursor() as cur:
        n = cur.execute('INSERT INTO %s VALUES (%%s)' % table, (row_id,))
    return '%d %s' % (n, one(conn, 'SELECT COUNT(*) FROM %s WHERE id = %%s'
                             % table, (row_id,)))


# PyMySQL's default, autocommit=False: it sends SET AUTOCOMMIT = 0
c0 = connect()
step('noautocommit', lambda: one(c0, 'SELECT @@server_id'))
c0.close()

c = connect(autocommit=True)
step('select', lambda: one(c, 'SELECT @@server_id, %s + 1', (6,)))
step('select_db', lambda: select_db(c))
step('ping', lambda: ping(c))
step('transaction', lambda: transaction(c))
step('after_commit', lambda: one(c, 'SELECT @@server_id'))
step('write_read', lambda: write_read(c))
step('call', lambda: call(c))
step('after_call', lambda: one(c, 'SELECT 5'))
c.close()
