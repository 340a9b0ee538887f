// The node mysql2 client of t/rwsplit_node.t (mysql2 from npm ci, found
// through NODE_PATH).
//
//   node rwsplit_node.js PORT TABLE ID REPLICA_SERVER_ID USER PASSWORD
//
// execute() is a server-side prepared statement (mysql2 prepares it once
// per connection and keeps it), query() a COM_QUERY.  Each step prints one
// line "STEP VALUE" or "STEP ERR message"; connectTimeout and the query
// timeouts turn a hang into an error.
'use strict';

const mysql = require('mysql2/promise');

const [port, table, id, rid, user, password] = process.argv.slice(2);

async function step(name, fn) {
    let v;
    try {
        v = await fn();
    } catch (e) {
        v = 'ERR ' + String(e.message).replace(/\n/g, ' ');
    }
    console.log(name + ' ' + v);
}

// the rows of every result set, "a,b c,d ..."
function rows(sets) {
    return sets.filter(Array.isArray)
        .map((set) => set.map((r) => Object.values(r).join(',')).join(' '))
        .join(' ');
}

async function main() {
    const c = await mysql.createConnection({
        host: '127.0.0.1', port: Number(port), user: 'app',
        password: 'secret', database: 'test', connectTimeout: 5000,
    });
    const timeout = 8000;

    // executed until it runs on the replica (the proxy prepares it there
    // meanwhile), with a deadline
    await step('select', async () => {
        const deadline = Date.now() + 3000;
        for (let n = 0; ; n++) {
            const [r] = await c.execute({
                sql: 'SELECT @@server_id AS s, ? AS v', timeout,
            }, [7]);
            const v = r[0].s + ' ' + r[0].v;
            if (String(r[0].s) === rid || Date.now() > deadline) {
                return v + ' (' + n + ' on the primary first)';
            }
        }
    });
    await step('insert', async () => {
        const [r] = await c.execute({
            sql: 'INSERT INTO ' + table + ' VALUES (?)', timeout,
        }, [Number(id)]);
        return r.affectedRows;
    });
    await step('call', async () => {
        const [sets] = await c.query({ sql: 'CALL rws_two()', timeout });
        return rows(sets);
    });
    await step('after_call', async () => {
        const [r] = await c.execute({ sql: 'SELECT ? + 1 AS x', timeout },
                                    [4]);
        return r[0].x;
    });
    await step('change_user', async () => {
        await c.changeUser({ user, password, database: 'test' });
        const [r] = await c.query({
            sql: 'SELECT CURRENT_USER() AS u, @@server_id AS s', timeout,
        });
        return r[0].u + ' ' + r[0].s;
    });
    // the new user's first reads: a prepared one, then a query
    await step('after_change_user', async () => {
        const [r] = await c.execute({
            sql: 'SELECT COUNT(*) AS n FROM ' + table + ' WHERE id = ?',
            timeout,
        }, [Number(id)]);
        return r[0].n;
    });
    await c.end();
}

main().catch((e) => {
    console.log('fatal ' + String(e.message).replace(/\n/g, ' '));
    process.exit(1);
});
