-- causal_web.lua: a web application's mix for `contrib/bench/run
-- --causal` (contrib/bench/README), over the sysbench tables that
-- oltp_read_only prepares.
--
-- Each client thread holds two connections, as an application's pool
-- hands a request's queries to one connection and the next request's to
-- another: `wcon`, which writes, and `rcon`, which never does.  One event
-- is a page:
--
--   1. a write on wcon: an upsert of a value no run wrote before into a
--      row that only this thread writes;
--   2. on rcon, the read of that row: the next request, on the next
--      connection, reading what the last one wrote.  A value other than
--      the one just written is a stale read, counted;
--   3. page_reads point selects of random rows, alternately on wcon and
--      rcon.
--
-- With page_reads 8 a page is 1 write and 9 reads: 90 % reads.  At the
-- end each thread prints one line
--     causal check: thread N reads R stale S
-- which contrib/bench sums.  Text protocol: the statements are built
-- here, whatever --db-ps-mode says.

sysbench.cmdline.options = {
   tables = {"Number of tables", 1},
   table_size = {"Number of rows per table", 10000},
   page_reads = {"Point selects per page besides the check", 8},
}

function thread_init()
   drv = sysbench.sql.driver()
   wcon = drv:connect()
   rcon = drv:connect()
   checks, stale, seq = 0, 0, 0
   -- no run writes a value another wrote: a stale read cannot match
   nonce = string.format("%d-%d", os.time(),
                         sysbench.rand.uniform(1, 1000000000))
   -- this thread's rows: id = tid + 1 + threads * k
   own = math.floor((sysbench.opt.table_size - 1 - sysbench.tid)
                    / sysbench.opt.threads)
end

local function point_select(con)
   con:query(string.format("SELECT c FROM sbtest%d WHERE id = %d",
      sysbench.rand.uniform(1, sysbench.opt.tables),
      sysbench.rand.default(1, sysbench.opt.table_size)))
end

function event()
   local t = sysbench.rand.uniform(1, sysbench.opt.tables)
   local id = sysbench.tid + 1
      + sysbench.opt.threads * sysbench.rand.uniform(0, own)
   seq = seq + 1
   local v = string.format("web-%s-%d-%d", nonce, sysbench.tid, seq)

   -- an upsert, so that the row is there whatever a delete of
   -- oltp_read_write left
   wcon:query(string.format("INSERT INTO sbtest%d (id, k, c, pad) "
      .. "VALUES (%d, %d, '%s', '') ON DUPLICATE KEY UPDATE c = VALUES(c)",
      t, id, id, v))
   local got = rcon:query_row(string.format(
      "SELECT c FROM sbtest%d WHERE id = %d", t, id))
   checks = checks + 1
   if got ~= v then
      stale = stale + 1
   end
   for i = 1, sysbench.opt.page_reads do
      point_select(i % 2 == 1 and wcon or rcon)
   end
end

function thread_done()
   io.write(string.format("causal check: thread %d reads %d stale %d\n",
                          sysbench.tid, checks, stale))
   wcon:disconnect()
   rcon:disconnect()
end
