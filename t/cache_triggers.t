#!/usr/bin/perl

# Regression: a write to a table whose trigger writes another table left
# the other table's entries stale (the cache invalidated only the tables
# the statement named).  The cache now asks the schema catalog (the
# monitor's, from information_schema.TRIGGERS) what a table's triggers
# write, through the triggers of the tables they write, or "everything"
# for a body it cannot read (BEGIN ... END).  What must hold: a write
# through the proxy to a table with a trigger invalidates what the trigger
# writes (another table, a chain of two, its own table); a compound
# trigger invalidates everything; a trigger created directly on the server
# (not through the proxy) is learned within monitor_schema_interval, and
# what it writes is invalidated from then on, by a write made through a
# statement prepared before it existed too.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query stmt_prepare stmt_execute
                    read_response send_packet);

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $n = $t->name;
my ($src, $log, $chain, $self, $cmp, $other, $late, $late_log) =
    map { "${n}_$_" } qw(src log chain self cmp other late late_log);
for my $tb ($src, $log, $chain, $cmp, $other, $late, $late_log) {
    $p->do("CREATE OR REPLACE TABLE test.$tb (id INT PRIMARY KEY "
           . "AUTO_INCREMENT, v INT)");
}
$p->do("CREATE OR REPLACE TABLE test.$self (id INT PRIMARY KEY, v INT, "
       . "doubled INT)");
$p->do("INSERT INTO test.$other VALUES (1, 1)");
$p->do("CREATE TRIGGER test.${n}_t1 AFTER INSERT ON test.$src FOR EACH ROW "
       . "INSERT INTO test.$log (v) VALUES (NEW.v)");
$p->do("CREATE TRIGGER test.${n}_t2 AFTER INSERT ON test.$log FOR EACH ROW "
       . "INSERT INTO test.$chain (v) VALUES (NEW.v * 10)");
$p->do("CREATE TRIGGER test.${n}_t3 BEFORE INSERT ON test.$self FOR EACH "
       . "ROW SET NEW.doubled = NEW.v * 2");
$p->do("CREATE TRIGGER test.${n}_t4 AFTER UPDATE ON test.$cmp FOR EACH ROW "
       . "BEGIN IF NEW.v > 0 THEN UPDATE test.$other SET v = v + 1; END IF; "
       . "END");
END {
    eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$src, test.$log, "
        . "test.$chain, test.$self, test.$cmp, test.$other, test.$late, "
        . "test.$late_log") } if $t;
}

$t->run_cache(plan => 14, workers => 2,
              upstream => "        monitor_schema_interval 300ms;\n");

sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

my $r = $t->dbh;
my $w = $t->dbh;
my $one = sub { ($r->selectrow_array($_[0]))[0] // 'NULL' };
# kept: once the catalog is current again after DDL (until then nothing
# that reads a table is stored)
my $kept = sub {
    my ($q) = @_;
    $t->wait_for(sub { $one->($q); served(sub { $one->($q) }) == 0 },
                 what => "$q kept");
};

my %q = (
    log   => "SELECT COUNT(*), SUM(v) FROM $log",
    chain => "SELECT SUM(v) FROM $chain",
    self  => "SELECT SUM(doubled) FROM $self",
    other => "SELECT v FROM $other WHERE id = 1",
    late  => "SELECT COUNT(*) FROM $late_log",
);
ok((grep { $kept->($_) } values %q) == keys %q, 'every read kept');

$w->do("INSERT INTO $src (v) VALUES (7)");
is($one->($q{log}), 1, 'a write to a table with a trigger invalidates the '
   . 'table the trigger writes');
is($one->($q{chain}), 70, 'and the table the trigger of that one writes');
$w->do("INSERT INTO $self VALUES (1, 21, NULL)");
is($one->($q{self}), 42, 'a trigger that writes its own row');

ok($kept->($q{other}), 'kept again');
$w->do("UPDATE $cmp SET v = 1");        # no row: the body does not run
$w->do("INSERT INTO $cmp (v) VALUES (5)");
$w->do("UPDATE $cmp SET v = 6");
is($one->($q{other}), 2, 'a trigger with a BEGIN ... END body: what it '
   . 'writes is invalidated (everything is)');

# a trigger made on the server directly, after the proxy kept its target's
# rows, and a write prepared before it existed
my $rs = raw_session($t->port(0), db => 'test') or die "login\n";
my ($id) = stmt_prepare($rs->{sock}, "INSERT INTO $late (v) VALUES (?)");
ok($id, 'a write prepared before the trigger exists');
ok($kept->($q{late}), 'the table the trigger will write: kept');
my $loads = $t->grep_log(qr/schema catalog loaded/);
$p->do("CREATE TRIGGER test.${n}_t5 AFTER INSERT ON test.$late FOR EACH "
       . "ROW INSERT INTO test.$late_log (v) VALUES (NEW.v)");
ok($t->wait_for(sub { $t->grep_log(qr/schema catalog loaded/) > $loads },
                timeout => 10, what => 'the catalog reloaded'),
   'the monitor learns the trigger made on the server');
send_packet($rs->{sock}, 0,
            stmt_execute(id => $id, params => [ [ 3, pack('V', 9) ] ]));
my $resp = read_response($rs->{sock});
ok(defined $resp && ord(substr($resp, 4, 1)) == 0, 'the prepared write runs');
is($one->($q{late}), 1, 'and invalidates what the new trigger wrote');
$w->do("INSERT INTO $late (v) VALUES (10)");
is($one->($q{late}), 2, 'so does a text write');

# the catalog's own counters
my $st = $t->cache_stats('qc');
ok(defined $st->{lookups}, 'the zone\'s counters');
cmp_ok($t->grep_log(qr/schema catalog loaded from .*: \d+ views, \d+ trig/),
       '>=', 2, 'the catalog logs its loads with what it holds');
