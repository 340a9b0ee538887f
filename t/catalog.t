#!/usr/bin/perl

# The schema catalog (src/mysql/upstream/slc_mysql_catalog.h): the monitor loads
# the views and triggers of an upstream's primary into a zone the workers
# read, for the query cache.  Nothing in the cache asks it yet, so the
# test filter t/modules/testcatalog wants it, asks it what the cache will
# ask (from a worker) and logs what its change hook is told (in the
# monitor); `sluice -s stats` logs each catalog's state.
#
# Views (a view, a view of a view, one calling NOW()) and triggers (one
# writing another table, one writing only its own row, one with a
# BEGIN ... END body) made directly on the primary are learned within
# monitor_schema_interval; DDL through the proxy (slc_catalog_ddl_seen)
# makes it stale at once until the next load; a monitor account without
# SHOW VIEW and TRIGGER leaves it blind, with an error that names the
# grant, until they are granted; a view whose definition the account may
# not see is never placed; a reload keeps the zone; sluice -t names the
# line of a bad directive.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('testcatalog', 'readconn');

my $db = 'sluice_catalog';
my $p = $t->primary_dbh;
END {
    if ($p) {
        eval { $p->do("DROP DATABASE IF EXISTS $db") };
        eval { $p->do('DROP VIEW IF EXISTS test.sluice_catalog_hidden') };
        eval { $p->do("DROP USER IF EXISTS $_") }
            for "'cat_mon'\@'%'", "'cat_blind'\@'%'";
    }
}

my $mon_pass = 'Cat-M0n-31';
$p->do("DROP DATABASE IF EXISTS $db");
$p->do("CREATE DATABASE $db");
$p->do("CREATE TABLE $db.$_ (id INT PRIMARY KEY, a INT)")
    for qw(t1 t2 Log stats own);
$p->do("CREATE OR REPLACE USER 'cat_mon'\@'%' IDENTIFIED BY ?", undef,
       $mon_pass);
# what the catalog needs: SHOW VIEW and TRIGGER on *.*, and SELECT on the
# views whose definitions it must read (information_schema hides them)
$p->do("GRANT SLAVE MONITOR, SHOW VIEW, TRIGGER ON *.* TO 'cat_mon'\@'%'");
$p->do("GRANT SELECT ON $db.* TO 'cat_mon'\@'%'");
# an account with what the monitor needs, but not the catalog
$t->server_user('cat_blind', $mon_pass);
$p->do("GRANT SLAVE MONITOR ON *.* TO 'cat_blind'\@'%'");

my $conf = <<"EOF";
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster {
        monitor_user cat_mon;
        monitor_password "$mon_pass";
        monitor_interval 100ms;
        monitor_schema_interval 500ms;
        monitor_schema_size SIZE;
        server %%PRIMARY%% role=auto;
        server %%REPLICA%% role=auto;
    }
    upstream blind {
        monitor_user cat_blind;
        monitor_password "$mon_pass";
        monitor_interval 100ms;
        monitor_schema_interval 300ms;
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters testcatalog;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream blind;
        filters testcatalog;
    }
}
EOF
(my $first = $conf) =~ s/SIZE/1m/;
$t->write_file_expand('sluice.conf', $first);
$t->run;
$t->plan(38);

my $P = $t->primary;

sub logged_since {
    my ($off, $re) = @_;
    return sub { my @m = substr($t->error_log, $off) =~ /$re/g; @m ? \@m : 0 };
}

# `sluice -s stats`: the catalog's line, as a hash
sub catalog_stats {
    my ($up) = @_;
    my $off = length $t->error_log;
    my $line;
    $t->signal('USR2');
    wait_for(sub {
        ($line) = substr($t->error_log, $off)
            =~ /(schema catalog of upstream "\Q$up\E": .*)/;
        $line }, what => "the catalog stats of $up");
    return { ($line // '') =~ /(\w+)=(\S+)/g };
}

# testcatalog's answer through server PORT (0: cluster, 1: blind)
sub ask {
    my ($q, $port) = @_;
    my $dbh = $t->dbh(port => $t->port($port // 0)) or return "no dbh";
    return scalar $dbh->selectrow_array("SELECT 'testcatalog: $q'");
}

# --- the first load ------------------------------------------------------

my $loaded = qr/upstream "cluster": schema catalog loaded from (\S+): /
    . qr/(\d+) views, (\d+) triggers/;
my $m = wait_for(logged_since(0, $loaded), what => 'the first load');
ok($m, 'the first load is logged');
is($m->[0], $P, '... from the primary the monitor sees');
my ($views0, $triggers0) = ($m->[1], $m->[2]);
ok(wait_for(logged_since(0,
    qr/testcatalog: upstream "cluster" changed: all/)),
   'a new zone: the hook is told everything changed');
my $st = catalog_stats('cluster');
is($st->{state}, 'ready', 'stats: ready');
is("$st->{views} $st->{triggers}", "$views0 $triggers0",
   'stats: the counts of the load');
is(ask("reads $db.t1"), 'table', 'a table is a table');
is(ask('facts'), 'ready=1 ansi_quotes=0 read_uncommitted=0',
   'the server\'s sql_mode and isolation');

# --- DDL made on the primary: learned within monitor_schema_interval ----

my $off = length $t->error_log;
my $t0 = time;
$p->do("CREATE VIEW $db.v1 AS SELECT t1.id, t2.a FROM $db.t1 JOIN $db.t2 "
       . "ON t1.id = t2.id");
$p->do("CREATE VIEW $db.v2 AS SELECT * FROM $db.v1 WHERE id > 1");
$p->do("CREATE VIEW $db.vnow AS SELECT id, NOW() AS n FROM $db.t1");
$p->do("CREATE VIEW $db.`Mixed``Case` AS SELECT a FROM $db.Log");
$p->do("CREATE TRIGGER $db.t1_log AFTER INSERT ON $db.t1 FOR EACH ROW "
       . "INSERT INTO Log VALUES (NEW.id, NEW.a)");
$p->do("CREATE TRIGGER $db.own_a BEFORE UPDATE ON $db.own FOR EACH ROW "
       . "SET NEW.a = NEW.a + 1");
my $want = sprintf('%d views, %d triggers', $views0 + 4, $triggers0 + 2);
ok(wait_for(logged_since($off, qr/\Q$P\E: \Q$want\E/), timeout => 5,
            what => 'the views and triggers loaded'),
   'views and triggers made on the primary are loaded');
cmp_ok(time - $t0, '<', 2.5, '... within monitor_schema_interval (500ms) '
       . 'and a round of checks');
# each line " NAME NAME ...": their names, each with a blank either side
my $told = join('', map { @$_ } wait_for(logged_since($off,
    qr/testcatalog: upstream "cluster" changed:([^\n]*)/)) || []) . ' ';
like($told, qr/ \Q$db.v1\E /, 'the hook is told about a new view');
ok($told =~ / \Q$db.t1\E / && $told =~ / \Q$db.log\E /,
   '... and about a table with a new trigger, and what it writes');

is(ask("reads $db.v1"), "view $db.t1 $db.t2 flags=0x0",
   'a view reads its base tables');
is(ask("reads $db.v2"), "view $db.t1 $db.t2 flags=0x0",
   'a view of a view: its base tables');
like(ask("reads $db.vnow"), qr/^view \Q$db\E\.t1 flags=0x(\w+)$/,
     'a view calling NOW()');
my ($flags) = ask("reads $db.vnow") =~ /flags=0x(\w+)/;
ok(hex($flags // 0) & 0x10000, '... carries the non-deterministic flag');
is(ask("reads $db.mixed`case"), "view $db.log flags=0x0",
   'names are keys as the cache makes them: lowercase, a backtick once');
is(ask("writes $db.t1"), "writes $db.log",
   'a trigger writing another table');
is(ask("writes $db.own"), 'writes', 'a trigger setting its own row only');
is(ask("writes $db.v1"), "writes $db.t1 $db.t2 $db.log",
   'a write through a view writes its base tables and their triggers\'');

$off = length $t->error_log;
$p->do("CREATE TRIGGER $db.t2_block AFTER DELETE ON $db.t2 FOR EACH ROW "
       . "BEGIN INSERT INTO Log VALUES (OLD.id, 0); "
       . "UPDATE stats SET a = a + 1; END");
ok(wait_for(sub { ask("writes $db.t2") eq 'all' }, timeout => 5,
            what => 'the compound trigger'),
   'a BEGIN ... END body may write anything');
ok(wait_for(logged_since($off,
    qr/testcatalog: upstream "cluster" changed: all/)),
   '... and the hook is told everything may have changed');

$st = catalog_stats('cluster');
is("$st->{state} $st->{views} $st->{triggers}",
   sprintf('ready %d %d', $views0 + 4, $triggers0 + 3),
   'stats: the new counts');
cmp_ok($st->{version}, '>=', 3, 'stats: a version per change');

# --- DDL through the proxy ----------------------------------------------

my $loads = $st->{loads};
is(ask("ddl $db.v2"), 'unknown', 'DDL seen: unknown at once');
ok(wait_for(sub { ask("reads $db.v2") =~ /^view/ }, timeout => 2,
            what => 'a load after the DDL'),
   '... until a load that began after it (within a monitor_interval)');
cmp_ok(catalog_stats('cluster')->{loads}, '>', $loads, '... a new load');

# --- a view the account may not see -------------------------------------

$p->do('CREATE VIEW test.sluice_catalog_hidden AS SELECT 1 AS x');
ok(wait_for(sub { ask('reads test.sluice_catalog_hidden') eq 'unknown' },
            timeout => 5, what => 'the hidden view'),
   'a view whose definition the account may not see is unknown');

# --- blind ------------------------------------------------------------------

my $blind = join '', 'upstream "blind": schema catalog blind: the monitor ',
    "account 'cat_blind'\@'%' lacks the global SHOW VIEW and TRIGGER ",
    "privileges (GRANT SHOW VIEW, TRIGGER ON *.* TO 'cat_blind'\@'%')";
$blind = qr/\Q$blind\E/;
ok(wait_for(logged_since(0, $blind), what => 'the blind error'),
   'without SHOW VIEW and TRIGGER: blind, logged with the grant to add');
ok(wait_for(sub { catalog_stats('blind')->{loads} >= 4 },
            what => 'more loads'), 'the blind catalog is loaded again');
is(scalar(() = $t->error_log =~ /$blind/g), 1, '... and logged once');
is(catalog_stats('blind')->{state}, 'blind', 'stats: blind');
is(ask("reads $db.v1", 1) . ' ' . ask("writes $db.t1", 1), 'unknown error',
   'a blind catalog answers nothing');
$off = length $t->error_log;
$p->do("GRANT SHOW VIEW, TRIGGER ON *.* TO 'cat_blind'\@'%'");
ok(wait_for(sub { ask("writes $db.t1", 1) eq "writes $db.log" },
            timeout => 5, what => 'the blind catalog sighted'),
   'the grants added: it answers');

# --- reload ---------------------------------------------------------------

$off = length $t->error_log;
ok($t->reload, 'reload');
ok(wait_for(logged_since($off, $loaded), what => 'the new monitor\'s load'),
   'the new monitor loads');
unlike(substr($t->error_log, $off),
       qr/testcatalog: upstream "cluster" changed/,
       'the zone is kept: nothing changed for the hook');

(my $second = $conf) =~ s/SIZE/512k/;
$t->write_file_expand('sluice.conf', $second);
$off = length $t->error_log;
$t->reload;
ok(wait_for(logged_since($off,
    qr/testcatalog: upstream "cluster" changed: all/)),
   'another monitor_schema_size: a new zone, everything changed');

# --- sluice -t --------------------------------------------------------------

my @bad = (
    ['monitor_user m; monitor_password p; monitor_schema_size 16k;',
     '"monitor_schema_size" must be from 64k to 1g', ''],
    ['monitor_user m; monitor_password p; monitor_schema_interval 10ms;',
     '"monitor_schema_interval" is below 100ms', ''],
    ['monitor_schema_interval 1s;',
     '"monitor_schema_interval" needs "monitor_user"', ''],
    ['', 'testcatalog: upstream "u" has no "monitor_user" (its schema '
     . 'catalog is loaded by the monitor)', 'filters testcatalog;'],
);
my @out;
for my $i (0 .. $#bad) {
    my ($up, $msg, $srv) = @{ $bad[$i] };
    $t->write_file("bad$i.conf", <<"EOF");
mysql {
    upstream u {
        $up
        server 127.0.0.1:3306 role=primary;
    }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream u;
        $srv
    }
}
EOF
    my ($rc, $out) = $t->test_config(conf => "bad$i.conf");
    my $line = $srv ne '' ? 6 : 3;
    push @out, $rc != 0 && $out =~ /bad$i\.conf:$line: \Q$msg\E/
        ? 'ok' : "$rc: $out";
}
is(join("\n", @out), join("\n", ('ok') x @bad),
   'sluice -t: a bad directive is named at its line');
