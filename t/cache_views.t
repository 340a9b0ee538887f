#!/usr/bin/perl

# Regression: a read of a view was never invalidated by writes to its base
# tables (MariaDB's main.create_drop_view and main.cte_cycle failed through
# the cache: SELECT * FROM v1 kept its old rows after INSERT INTO t1).  The
# cache now asks the schema catalog (the monitor's, from
# information_schema.VIEWS) which names are views and what they read, and
# keys an entry of a view by its base tables too.  What must hold: a read
# of a view, or of a view of a view, shows a write to any base table made
# through the proxy at once; a view calling NOW() is never kept; a view
# redefined through the proxy answers with its new definition at once; a
# table replaced by a view made directly on the server (not through the
# proxy) answers as the view within monitor_schema_interval; a view whose
# definition the monitor may not see is never kept (schema_unknown).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $n = $t->name;
my ($b1, $b2, $v1, $v2, $vn, $vx) = map { "${n}_$_" }
    qw(b1 b2 v1 v2 vnow vx);
$p->do("CREATE OR REPLACE TABLE test.$b1 (id INT PRIMARY KEY, v INT)");
$p->do("CREATE OR REPLACE TABLE test.$b2 (id INT PRIMARY KEY, w INT)");
$p->do("INSERT INTO test.$b1 VALUES (1, 10), (2, 20)");
$p->do("INSERT INTO test.$b2 VALUES (1, 100), (2, 200)");
$p->do("CREATE OR REPLACE VIEW test.$v1 AS SELECT $b1.id, v, w "
       . "FROM test.$b1 JOIN test.$b2 ON $b1.id = $b2.id");
$p->do("CREATE OR REPLACE VIEW test.$v2 AS SELECT id, v + w AS s "
       . "FROM test.$v1");
$p->do("CREATE OR REPLACE VIEW test.$vn AS SELECT id, NOW(6) AS t "
       . "FROM test.$b1");
$p->do("CREATE OR REPLACE TABLE test.$vx (id INT PRIMARY KEY, v INT)");
$p->do("INSERT INTO test.$vx VALUES (1, -1)");
END {
    eval { $t->primary_dbh->do("DROP VIEW IF EXISTS test.$v1, test.$v2, "
                               . "test.$vn, test.$vx, test.${n}_hid");
           $t->primary_dbh->do("DROP TABLE IF EXISTS test.$b1, test.$b2, "
                               . "test.$vx, hid_db.t");
           $t->primary_dbh->do("DROP DATABASE IF EXISTS ${n}_hid") } if $t;
}

$t->run_cache(plan => 17, workers => 2,
              upstream => "        monitor_schema_interval 300ms;\n");

sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

my $r = $t->dbh;
my $w = $t->dbh;
my $q1 = "SELECT id, v, w FROM $v1 ORDER BY id";
my $q2 = "SELECT id, s FROM $v2 ORDER BY id";
my $rows = sub { join ',', map { join ':', map { $_ // 'NULL' } @$_ }
                 @{ $r->selectall_arrayref($_[0]) } };

is($rows->($q1), '1:10:100,2:20:200', 'the view reads its base tables');
is(served(sub { $rows->($q1) }), 0, 'and is kept: a hit');
is($rows->($q2), '1:110,2:220', 'the view of the view');
is(served(sub { $rows->($q2) }), 0, 'is kept too');

$w->do("INSERT INTO $b1 VALUES (3, 30)");
$w->do("INSERT INTO $b2 VALUES (3, 300)");
is($rows->($q1), '1:10:100,2:20:200,3:30:300', 'a write to a base table '
   . 'through the proxy shows in the view at once');
is($rows->($q2), '1:110,2:220,3:330', 'and in the view of the view');
$w->do("UPDATE $b2 SET w = 0 WHERE id = 1");
is($rows->($q2), '1:10,2:220,3:330', 'the second base table\'s too');

# a view of a non-deterministic function: never kept
$rows->("SELECT id, t FROM $vn WHERE id = 1");
is(served(sub { $rows->("SELECT id, t FROM $vn WHERE id = 1") }), 1,
   'a view that calls NOW() is never served from the cache');

# redefined through the proxy: at once
$w->do("CREATE OR REPLACE VIEW $v1 AS SELECT $b1.id, v * 2 AS v, w "
       . "FROM $b1 JOIN $b2 ON $b1.id = $b2.id");
is($rows->($q1), '1:20:0,2:40:200,3:60:300', 'a view redefined through the '
   . 'proxy answers with its new definition');
$w->do("UPDATE $b1 SET v = 50 WHERE id = 2");
ok($t->wait_for(sub { $rows->($q1) eq '1:20:0,2:100:200,3:60:300' },
                what => 'the new definition placed'),
   'and its base tables still invalidate it once the catalog has it again');

# a table replaced by a view directly on the server: learned at the next
# load, which invalidates the name
my $qx = "SELECT id, v FROM $vx ORDER BY id";
is($rows->($qx), '1:-1', 'a table');
ok($t->wait_for(sub { $rows->($qx); served(sub { $rows->($qx) }) == 0 },
                what => 'kept'), 'kept (once the catalog is current again '
   . 'after the DDL through the proxy: nothing that reads a table is '
   . 'stored meanwhile)');
$p->do("DROP TABLE test.$vx");
$p->do("CREATE VIEW test.$vx AS SELECT id, v FROM test.$b1");
ok($t->wait_for(sub { $rows->($qx) eq '1:10,2:50,3:30' }, timeout => 10,
                what => 'the view made on the server'),
   'made a view on the server (not through the proxy): answers as the view '
   . 'within monitor_schema_interval');
$w->do("UPDATE $b1 SET v = 11 WHERE id = 1");
is($rows->($qx), '1:11,2:50,3:30', 'and its base table invalidates it');

# a view whose definition the monitor may not see: never kept
$p->do("CREATE DATABASE IF NOT EXISTS ${n}_hid");
$p->do("CREATE OR REPLACE TABLE ${n}_hid.t (id INT)");
$p->do("INSERT INTO ${n}_hid.t VALUES (1)");
$p->do("CREATE OR REPLACE VIEW ${n}_hid.v AS SELECT id FROM ${n}_hid.t");
$t->wait_for(sub { $t->grep_log(qr/may not see the definition/) },
             timeout => 10, what => 'the hidden view seen');
my $qh = "SELECT id FROM ${n}_hid.v";
$rows->($qh);
is(served(sub { $rows->($qh) }), 1, 'a view the monitor account may not '
   . 'read is never served from the cache');
$t->allow_log(qr/may not see the definition/);
$w->do("INSERT INTO ${n}_hid.t VALUES (2)");
is($rows->($qh), '1,2', 'and always reads the current rows');
cmp_ok($t->cache_stats('qc')->{schema_unknown} // 0, '>', 0,
       'counted as schema_unknown');
