#!/usr/bin/perl

# The primary's binlog as the cache's second source of invalidations
# (issue 21): a write that never passes through the proxy (a client of
# the server itself, the event scheduler, a trigger, a procedure, LOAD
# DATA, DDL, XA) invalidates the cached entries of its tables within a
# deadline, in ROW, MIXED and STATEMENT format; a transaction rolled back
# invalidates nothing.  The reader killed or stalled: with `binlog_lost
# bypass` no hit is served until it is back and has read what it missed;
# with `serve` hits go on.  Its server id clashes with no replica, and it
# writes nothing.  Whether the server answered a read is told by its
# Com_select; every entry lives 600 s, so only an invalidation makes a
# read see a new value.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache', 'readwritesplit');

my $p = $t->primary_dbh;
my $bl_pass = 'B1nlog-Reader-7';
Sluice::Test::binlog_account($p, 'binlog_mon', $bl_pass);
$p->do('DROP TABLE IF EXISTS test.bl_k3, test.bl_fc, test.bl_fp');
$p->do("CREATE OR REPLACE TABLE test.bl_$_ (id INT PRIMARY KEY, v INT)")
    for qw(a b c d e f g h i j k l m n o);
$p->do("INSERT INTO test.bl_$_ VALUES (1, 1)")
    for qw(a b c d e f g h i j k l m n o);

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        monitor_schema_interval 100ms;
        server %%PRIMARY%% role=primary;
        binlog on;
        binlog_user binlog_mon; binlog_password "$bl_pass";
    }
    upstream serving {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        binlog on;
        binlog_user binlog_mon; binlog_password "$bl_pass";
        binlog_lost serve;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream db;
        filters cache;
        cache qc;
        cache_ttl 600s;
    }
    upstream split {
        monitor_user monitor; monitor_password "monitor";
        monitor_interval 100ms;
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
        binlog on;
        binlog_user binlog_mon; binlog_password "$bl_pass";
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readwritesplit;
        upstream split;
        causal_reads off;
        filters cache;
        cache qc;
        cache_ttl 600s;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream serving;
        filters cache;
        cache qc;
        cache_ttl 600s;
    }
}
EOF
$t->run;
$t->plan(97);
$t->allow_log(qr/binlog "\w+": /);

ok(wait_for(sub { $t->grep_log(qr/binlog "db": live/)
                  && $t->grep_log(qr/binlog "serving": live/)
                  && $t->grep_log(qr/binlog "split": live/) },
            what => 'the readers live'), 'the binlog readers are live');

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# binlog_password is kept masked, and the reader wipes what Connector/C
# kept of it once logged in
SKIP: {
    skip 'needs root to read /proc/PID/mem', 2 if $>;
    my @bl = $t->role_pids('binlog');
    ok(@bl == 3 && !grep({ Sluice::Test::mem_count($_, 'binlog_mon') < 1 }
                         @bl),
       'the scan finds the binlog user name in the readers');
    is(join(' ', map { Sluice::Test::mem_count($_, $bl_pass) }
                 $t->master_pid, $t->worker_pids, @bl), '0 0 0 0 0',
       'no plaintext binlog_password in the master, the worker or a reader');
}

my $d = $t->dbh;
ok($d, 'logged in') or diag($DBI::errstr);

# [value, reads the server answered]
sub read1 {
    my ($dbh, $q) = @_;
    my $c0 = com_select();
    my ($v) = $dbh->selectrow_array($q);
    return [$v, com_select() - $c0];
}

# $q is answered from the cache with $want (stored first if need be)
sub cached {
    my ($q, $want, $dbh) = @_;
    return wait_for(sub { my $g = read1($dbh // $d, $q);
                          $g->[1] == 0 && ($g->[0] // '') eq $want },
                    what => "'$q' served from the cache with $want");
}

# after a write that bypassed the proxy: $q sees $want within 10 s
sub sees {
    my ($q, $want) = @_;
    return wait_for(sub { (read1($d, $q)->[0] // '') eq $want },
                    what => "'$q' to see $want");
}

# a direct write (code) must make the cached $q see $want
sub invalidates {
    my ($name, $q, $old, $code, $want) = @_;
    ok(cached($q, $old), "$name: the read is cached");
    $code->();
    ok(sees($q, $want), "$name: invalidated, the read sees the write");
}

sub fmt { $p->do("SET SESSION binlog_format = '$_[0]'") }

# --- plain writes, in each format ---------------------------------------

invalidates('UPDATE, ROW', 'SELECT v FROM bl_a WHERE id = 1', 1,
            sub { fmt('ROW'); $p->do('UPDATE test.bl_a SET v = 2') }, 2);
invalidates('UPDATE, MIXED', 'SELECT v FROM bl_a WHERE id = 1', 2,
            sub { fmt('MIXED'); $p->do('UPDATE test.bl_a SET v = 3') }, 3);
invalidates('UPDATE, STATEMENT', 'SELECT v FROM bl_a WHERE id = 1', 3,
            sub { fmt('STATEMENT'); $p->do('UPDATE test.bl_a SET v = 4') },
            4);
invalidates('INSERT with a default database, STATEMENT',
            'SELECT COUNT(*) FROM bl_b', 1,
            sub { fmt('STATEMENT'); $p->do('USE test');
                  $p->do('INSERT INTO bl_b VALUES (2, 2)') }, 2);
my $nodb = DBI->connect('DBI:MariaDB:mariadb_socket=' . $t->primary_socket,
                        'root', '', { RaiseError => 1, PrintError => 0 });
invalidates('no default database, STATEMENT', 'SELECT COUNT(*) FROM bl_b', 2,
            sub { $nodb->do("SET SESSION binlog_format = 'STATEMENT'");
                  $nodb->do('INSERT INTO test.bl_b VALUES (3, 3)') }, 3);
invalidates('multi-table UPDATE, ROW', 'SELECT v FROM bl_c WHERE id = 1', 1,
            sub { fmt('ROW'); $p->do('UPDATE test.bl_c, test.bl_d SET '
                  . 'bl_c.v = 5, bl_d.v = 5') }, 5);
ok(sees('SELECT v FROM bl_d WHERE id = 1', 5), 'and its other table');
invalidates('multi-table UPDATE, STATEMENT',
            'SELECT v FROM bl_d WHERE id = 1', 5,
            sub { fmt('STATEMENT'); $p->do('UPDATE test.bl_c, test.bl_d '
                  . 'SET bl_c.v = 6, bl_d.v = 6') }, 6);

# --- triggers, procedures, the event scheduler ----------------------------

$p->do('CREATE OR REPLACE TRIGGER test.bl_e_ai AFTER INSERT ON test.bl_e '
       . 'FOR EACH ROW UPDATE test.bl_f SET v = v + 1');
invalidates('a trigger writes another table, ROW',
            'SELECT v FROM bl_f WHERE id = 1', 1,
            sub { fmt('ROW'); $p->do('INSERT INTO test.bl_e VALUES (2, 2)') },
            2);
invalidates('a trigger writes another table, STATEMENT (the catalog)',
            'SELECT v FROM bl_f WHERE id = 1', 2,
            sub { fmt('STATEMENT');
                  $p->do('INSERT INTO test.bl_e VALUES (3, 3)') }, 3);
$p->do('CREATE OR REPLACE PROCEDURE test.bl_p() '
       . 'UPDATE test.bl_g SET v = v + 10');
invalidates('a stored procedure, ROW', 'SELECT v FROM bl_g WHERE id = 1', 1,
            sub { fmt('ROW'); $p->do('CALL test.bl_p()') }, 11);
invalidates('a stored procedure, STATEMENT',
            'SELECT v FROM bl_g WHERE id = 1', 11,
            sub { fmt('STATEMENT'); $p->do('CALL test.bl_p()') }, 21);
my $sched = $p->selectrow_array('SELECT @@global.event_scheduler');
END { eval { $p->do("SET GLOBAL event_scheduler = $sched") } if $sched }
invalidates('the event scheduler', 'SELECT v FROM bl_h WHERE id = 1', 1,
            sub { $p->do('SET GLOBAL event_scheduler = ON');
                  $p->do('CREATE OR REPLACE EVENT test.bl_ev ON SCHEDULE AT '
                         . 'CURRENT_TIMESTAMP DO UPDATE test.bl_h SET v = 7')
            }, 7);

$p->do('CREATE OR REPLACE TABLE test.bl_fc (id INT PRIMARY KEY, p INT)');
$p->do('CREATE OR REPLACE TABLE test.bl_fp (id INT PRIMARY KEY)');
$p->do('ALTER TABLE test.bl_fc ADD FOREIGN KEY (p) REFERENCES test.bl_fp '
       . '(id) ON DELETE CASCADE');
$p->do('INSERT INTO test.bl_fp VALUES (1), (2)');
$p->do('INSERT INTO test.bl_fc VALUES (1, 1), (2, 2)');
invalidates('a foreign key\'s cascade, ROW', 'SELECT COUNT(*) FROM bl_fc', 2,
            sub { fmt('ROW'); $p->do('DELETE FROM test.bl_fp WHERE id = 1') },
            1);

# --- LOAD DATA ------------------------------------------------------------

my $file = $t->testdir . '/bl_load.txt';
$t->write_file('bl_load.txt', "2\t2\n3\t3\n");
invalidates('LOAD DATA, ROW', 'SELECT COUNT(*) FROM bl_i', 1,
            sub { fmt('ROW'); $p->do("LOAD DATA INFILE '$file' INTO TABLE "
                                     . 'test.bl_i') }, 3);
$t->write_file('bl_load.txt', "4\t4\n");
invalidates('LOAD DATA, STATEMENT', 'SELECT COUNT(*) FROM bl_i', 3,
            sub { fmt('STATEMENT');
                  $p->do("LOAD DATA INFILE '$file' INTO TABLE test.bl_i") },
            4);

# --- DDL --------------------------------------------------------------------

fmt('ROW');
invalidates('ALTER TABLE', 'SELECT * FROM bl_j WHERE id = 1', 1,
            sub { $p->do('ALTER TABLE test.bl_j DROP COLUMN v, '
                         . 'ADD COLUMN w INT DEFAULT 9 FIRST') }, 9);
$p->do('CREATE OR REPLACE TABLE test.bl_k2 (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.bl_k2 VALUES (1, 8)');
invalidates('RENAME TABLE', 'SELECT v FROM bl_k WHERE id = 1', 1,
            sub { $p->do('RENAME TABLE test.bl_k TO test.bl_k3, '
                         . 'test.bl_k2 TO test.bl_k') }, 8);
invalidates('TRUNCATE TABLE', 'SELECT COUNT(*) FROM bl_l', 1,
            sub { $p->do('TRUNCATE TABLE test.bl_l') }, 0);
ok(cached('SELECT COUNT(*) FROM bl_m', 1), 'DROP TABLE: the read is cached');
$p->do('DROP TABLE test.bl_m');
ok(wait_for(sub { !defined $d->selectrow_array('SELECT COUNT(*) FROM bl_m')
                  && ($d->err // 0) == 1146 },
            what => 'the read to fail'),
   'DROP TABLE: invalidated, the read gets 1146');

# --- transactions: rolled back, XA ------------------------------------------

# a write the reader must have applied before the check that follows
sub marker {
    my ($v) = @_;
    $p->do("UPDATE test.bl_o SET v = $v");
    return sees('SELECT v FROM bl_o WHERE id = 1', $v);
}
ok(cached('SELECT v FROM bl_n WHERE id = 1', 1), 'rollback: the read is '
   . 'cached');
ok(cached('SELECT v FROM bl_o WHERE id = 1', 1), 'and a marker read');
$p->begin_work;
$p->do('UPDATE test.bl_n SET v = 50');
$p->rollback;
ok(marker(2), 'a later write is seen');
# (a read the reader's stall bypassed, on a loaded machine, says nothing
# of the rollback: it is read again)
my $rb;
for (1 .. 5) {
    my $b0 = $t->cache_stats('qc')->{binlog_bypass};
    $rb = read1($d, 'SELECT v FROM bl_n WHERE id = 1');
    last if $t->cache_stats('qc')->{binlog_bypass} == $b0;
}
is_deeply($rb, [1, 0],
          'a transaction rolled back invalidated nothing: still a hit');

# a prepared XA transaction holds its locks until it ends: whatever
# happens, it ends
END { eval { $p->do("XA ROLLBACK '$_'") } for qw(bl1 bl2) }
my $x = $t->primary_dbh;             # the XA transactions' session
$x->do('SET SESSION binlog_format = ROW');
$x->do("XA START 'bl1'");
$x->do('UPDATE test.bl_n SET v = 60');
$x->do("XA END 'bl1'");
$x->do("XA PREPARE 'bl1'");
ok(marker(3), 'XA PREPARE, then a later write is seen');
is_deeply(read1($d, 'SELECT v FROM bl_n WHERE id = 1'), [1, 0],
          'a prepared XA transaction is not committed: still a hit');
$x->do("XA COMMIT 'bl1'");
ok(sees('SELECT v FROM bl_n WHERE id = 1', 60),
   'XA COMMIT: invalidated, the read sees the write');
ok(cached('SELECT v FROM bl_n WHERE id = 1', 60), 'cached again');
$x->do("XA START 'bl2'");
$x->do('UPDATE test.bl_n SET v = 70');
$x->do("XA END 'bl2'");
$x->do("XA PREPARE 'bl2'");
$x->do("XA ROLLBACK 'bl2'");
ok(marker(4), 'XA ROLLBACK, then a later write is seen');
is_deeply(read1($d, 'SELECT v FROM bl_n WHERE id = 1'), [60, 0],
          'XA ROLLBACK invalidated nothing: still a hit');

# --- the reader killed, stalled ---------------------------------------------

sub binlog_stats { $t->binlog_stats(@_) }

my $q = 'SELECT v FROM bl_a WHERE id = 1';
ok(cached($q, 4), 'a cached read');
my $st = binlog_stats('db');
my $off = length $t->error_log;
ok(kill('KILL', $st->{pid}), 'the reader of "db" is killed');
# a write meanwhile (how soon the master starts another reader is not the
# test's to know, nor whether a read falls in between: while the zone
# has not heard of the write, a hit may be as old as the binlog delay,
# the default guarantee); once the new reader is live, it has applied
# the write
$p->do('UPDATE test.bl_a SET v = 5');
ok(wait_for(sub { read1($d, $q)->[1] == 0 && substr($t->error_log, $off)
                      =~ /binlog "db": live/ },
            what => 'hits again'), 'a new reader is live and hits are back');
like(substr($t->error_log, $off),
     qr/binlog process $st->{pid} exited on signal 9.*start binlog process/s,
     'the master saw the reader die and started another');
is(read1($d, $q)->[0], 5, 'the hit is the write\'s answer');
# (userstat is on: server_status turned it on for Com_select)
my $us = $p->selectall_hashref('SHOW USER_STATISTICS', 'User')->{binlog_mon};
ok($us && $us->{Update_commands} == 0 && $us->{Binlog_bytes_written} == 0
   && $us->{Rows_updated} + $us->{Rows_inserted} + $us->{Rows_deleted} == 0,
   'the readers wrote nothing to the primary (its USER_STATISTICS)')
    or diag(explain($us));

$st = binlog_stats('db');
ok(kill('STOP', $st->{pid}), 'the reader is stopped');
ok(wait_for(sub { read1($d, $q)->[1] == 1 }, what => 'a bypassed read'),
   'it is not heard from: reads go to the server');
$p->do('UPDATE test.bl_a SET v = 100');
ok(kill('CONT', $st->{pid}), 'the reader goes on');
my $stale = 0;
ok(wait_for(sub { my $g = read1($d, $q); $stale++ if ($g->[0] // 0) != 100;
                  $g->[1] == 0 },
            what => 'a hit after the stall'), 'hits are back');
is($stale, 0, 'and none served what the write made stale');

# --- a reload: the new readers resume where the old ones stopped -----------

# The old readers (all three read the same primary into the same zone)
# are stopped before a direct write, so only the new ones can see it:
# from the positions the zone kept, not from the primary's current one.
# Nothing reads between the write and the new readers being live, so the
# entry would be served stale if the write were skipped.
ok(cached($q, 100), 'a cached read');
my %old = map { binlog_stats($_)->{pid} => $_ } qw(db serving split);
kill 'STOP', keys %old;
sub pstate {
    my $st = Sluice::Sandbox::slurp("/proc/$_[0]/stat") // '';
    return (split ' ', $st =~ s/^.*\)\s+//sr)[0] // '';
}
ok(wait_for(sub { !grep { pstate($_) ne 'T' } keys %old },
            what => 'the old readers stopped'), 'the old readers are stopped');
$p->do('UPDATE test.bl_a SET v = 101');
$off = length $t->error_log;
ok($t->reload, 'a reload');
# the old ones go on only once the new ones have taken their upstreams'
# entries (they connect after that), so that no old one applies the
# write first
sub new_readers {
    my ($what) = @_;
    my ($log, %up) = (substr($t->error_log, $off));
    while ($log =~ /\[notice\] (\d+): binlog "(\w+)": \Q$what\E/g) {
        $up{$2} = 1 unless $old{$1};
    }
    return scalar keys %up;
}
ok(wait_for(sub { new_readers('reading') == 3 }, what => 'the new readers'),
   'new readers connect');
ok(wait_for(sub { new_readers('taken over') == 3 },
            what => 'the new readers live'),
   'and, once live, take over from the old ones');
kill 'CONT', keys %old;
is(read1($d, $q)->[0], 101, 'they read the write the old ones had not: '
   . 'resumed from the kept position');

# --- a reload does not pause hits --------------------------------------------

# The old readers go on until the new ones are live and take over (their
# server ids differ, so the primary keeps both): no read meanwhile is
# bypassed.
ok(cached($q, 101), 'a cached read');
$off = length $t->error_log;
%old = map { binlog_stats($_)->{pid} => $_ } qw(db serving split);
ok($t->reload, 'a reload');
my $misses = 0;
ok(wait_for(sub { $misses += read1($d, $q)->[1];
                  new_readers('taken over') == 3 },
            what => 'the new readers to take over'),
   'the new readers take over');
$misses += read1($d, $q)->[1];
is($misses, 0, 'every read meanwhile was a hit');
ok(wait_for(sub { !grep { kill 0, $_ } keys %old },
            what => 'the old readers gone'), 'the old readers are gone');

# --- a replica behind a direct write ---------------------------------------

# The cache keeps a replica's answer only when the monitor knew the
# replica held every write its tables saw: with the binlog, the writes
# made straight at the primary count too.  The replica's SQL thread is
# held back by a LOCK TABLES ... READ it waits on.
my $rep = $t->replica_dbh;
$p->do('CREATE OR REPLACE TABLE test.bl_r (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO test.bl_r VALUES (1, 1)');
ok(wait_for(sub { $rep->selectrow_array('SELECT v FROM test.bl_r') },
            what => 'bl_r on the replica'), 'a table on both servers');
sub rep_read {
    my ($dbh) = @_;
    my $c0 = Sluice::Test::server_status($rep, 'Com_select');
    my ($v) = $dbh->selectrow_array('SELECT v FROM bl_r WHERE id = 1');
    return [$v, Sluice::Test::server_status($rep, 'Com_select') - $c0];
}
my $w = $t->dbh(port => $t->port(2));
my $g;
ok(wait_for(sub { $g = rep_read($w); $g->[1] == 0 && $g->[0] == 1 },
            what => 'a replica\'s answer kept'),
   'readwritesplit: a replica\'s answer is cached');
my $locker = $t->replica_dbh;
END { eval { $locker->do('UNLOCK TABLES') } if $locker }
$locker->do('LOCK TABLES test.bl_r READ');
$p->do('UPDATE test.bl_r SET v = 2');
my $want = $p->selectrow_array('SELECT @@global.gtid_binlog_pos');
# whether position text $have holds every GTID of $want (per domain)
sub covers {
    my ($have, $want) = @_;
    my %h = map { /^(\d+)-\d+-(\d+)$/ ? ($1 => $2) : () } split /,/, $have;
    return !grep { !/^(\d+)-\d+-(\d+)$/ || ($h{$1} // -1) < $2 }
           split /,/, $want;
}
ok(wait_for(sub { covers(binlog_stats('split')->{position}, $want) },
            what => 'the reader past the write'), 'the reader read the write');
is_deeply(rep_read($w), [1, 1], 'the entry is invalidated: the replica, '
          . 'behind, answers with the old row (replication lag)');
is_deeply(rep_read($w), [1, 1], 'which is not kept: the replica did not '
          . 'hold the direct write');
$locker->do('UNLOCK TABLES');
my $old_hits = 0;
ok(wait_for(sub { $g = rep_read($w);
                  $old_hits++ if $g->[1] == 0 && $g->[0] != 2;
                  $g->[1] == 0 && $g->[0] == 2 },
            what => 'the new row kept'),
   'once the replica is in step, its answer is kept again');
is($old_hits, 0, 'and the old row was never served from the cache');

# --- binlog_lost serve --------------------------------------------------------

my $s = $t->dbh(port => $t->port(1));
ok(cached('SELECT v FROM bl_c WHERE id = 1', 6, $s), 'serve: a cached read');
# (every reader stopped: none invalidates the shared zone meanwhile)
my @readers = map { binlog_stats($_)->{pid} } qw(serving db split);
ok(kill('STOP', @readers) == 3, 'the readers are stopped');
ok(wait_for(sub { read1($d, $q)->[1] == 1 }, what => 'a bypassed read'),
   'not heard from: the bypass server\'s reads go to the server');
is_deeply(read1($s, 'SELECT v FROM bl_c WHERE id = 1'), [6, 0],
          'binlog_lost serve: hits go on');
kill('CONT', @readers);

# --- server ids ---------------------------------------------------------------

my %hosts = map { $_->{Server_id} => $_->{Host} }
            @{ $p->selectall_arrayref('SHOW SLAVE HOSTS', { Slice => {} }) };
my ($id1, $id2) = (binlog_stats('db')->{server_id},
                   binlog_stats('serving')->{server_id});
isnt($id1, $id2, 'two readers, two server ids');
ok($id1 >= 0x40000000 && $id2 >= 0x40000000, 'derived ids are large');
like($hosts{$id1} // '', qr/^sluice:/, 'registered with the primary');
my $rid = $t->replica_dbh->selectrow_array('SELECT @@server_id');
ok($id1 != $rid && $id2 != $rid, 'neither is the replica\'s');
my $slave = $t->replica_dbh->selectrow_hashref('SHOW SLAVE STATUS');
is($slave->{Slave_IO_Running}, 'Yes', 'the replica still replicates');

# --- configuration ------------------------------------------------------------

sub conf_error {
    my ($body, $vbody) = @_;
    $vbody //= '';
    $t->write_file_expand('bad.conf', <<"EOF");
events { worker_connections 10; }
mysql {
    user app { password "x"; }
    cache_zone qc size=8m;
    upstream u {
        monitor_user m; monitor_password "m";
        server 127.0.0.1:1 role=primary;
        $body
    }
    server { listen 127.0.0.1:%%PORT_2%%; router readconn; upstream u;
             filters cache; cache qc; }
    upstream v { server 127.0.0.1:1 role=primary; $vbody }
    server { listen 127.0.0.1:%%PORT_3%%; router readconn; upstream v; }
}
EOF
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    return $rc != 0 ? $out : 'accepted';
}
like(conf_error('binlog_user x; binlog_password "y";'),
     qr/bad\.conf:\d+: .*need "binlog on"/, 'binlog_user without binlog on');
like(conf_error('binlog on; binlog_user x;'),
     qr/bad\.conf:\d+: .*go together/, 'binlog_user without a password');
like(conf_error('binlog on; binlog_server_id 0;'),
     qr/bad\.conf:\d+: .*binlog_server_id/, 'binlog_server_id 0');
like(conf_error('binlog on; binlog_lost maybe;'),
     qr/bad\.conf:\d+: /, 'binlog_lost maybe');
like(conf_error('', 'monitor_user m; monitor_password "m"; binlog on;'),
     qr/bad\.conf:\d+: "binlog on": no server with "filters cache" uses /,
     'binlog on without a cache in front');
is(conf_error('binlog on; binlog_lost serve;'), 'accepted',
   'a good one is accepted');
