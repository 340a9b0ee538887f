#!/usr/bin/perl

# The cache filter and stored functions (issue 10): a SELECT that calls a
# function that is no MariaDB built-in (unqualified, qualified or quoted)
# is never served from the cache, so a function that writes runs every
# time (its log table gets a row a call: a cached answer would drop the
# write); built-ins around it (COUNT, CONCAT, DATE_FORMAT, a window
# function) are still cached; a cache_rule with cache_stored_functions
# caches a deterministic one, a rule with a ttl alone does not; the
# counters log stored_function; a call invalidates every entry (the
# function may have written anything) unless the rule says it is pure.
# Whether the server answered is told by its Com_select and by the rows
# the function wrote.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
# CREATE FUNCTION under binary logging wants SUPER or this; put it back
my ($trust) = $p->selectrow_array('SELECT @@log_bin_trust_function_creators');
$p->do('SET GLOBAL log_bin_trust_function_creators = 1');
# the sandbox is shared by the tests that follow
END {
    eval { $t->primary_dbh->do('SET GLOBAL log_bin_trust_function_creators '
                               . "= $trust") } if defined $trust;
}
$p->do('CREATE OR REPLACE TABLE test.cfn_log (x INT)');
$p->do('CREATE OR REPLACE TABLE test.cfn_t (id INT PRIMARY KEY, '
       . 'v VARCHAR(16), d DATE)');
$p->do("INSERT INTO test.cfn_t VALUES (1, 'a', '2024-01-02'), "
       . "(2, 'b', '2024-03-04'), (3, 'a', '2024-05-06')");
$p->do('CREATE OR REPLACE FUNCTION test.cfn_audit(x INT) RETURNS INT '
       . 'MODIFIES SQL DATA BEGIN INSERT INTO test.cfn_log VALUES (x); '
       . 'RETURN x; END');
$p->do('CREATE OR REPLACE FUNCTION test.cfn_double(x INT) RETURNS INT '
       . 'DETERMINISTIC NO SQL RETURN x * 2');

$t->run_cache(plan => 19, server => <<'EOF');
        cache_rule plain match=text "cfn_plain" ttl=60s;
        cache_rule fn_ok match=text "cfn_double\(" ttl=60s
                   cache_stored_functions;
EOF

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

sub logged {
    return ($p->selectrow_array('SELECT COUNT(*) FROM test.cfn_log '
                                . "WHERE x = $_[0]"))[0];
}

my $d = $t->dbh;
ok($d, 'connected through the cache');

# --- a function that writes: runs every time ---------------------------------

my @calls = (
    [ 1, 'SELECT test.cfn_audit(1)' ],
    [ 2, 'SELECT cfn_audit(2)' ],
    [ 3, 'SELECT `cfn_audit` (3) FROM cfn_t WHERE id = 1' ],
    [ 4, 'SELECT `test`.`cfn_audit`(4) AS a, COUNT(*) FROM cfn_t' ],
    [ 5, 'SELECT id FROM cfn_t WHERE id = cfn_audit(5) - 4' ],
);
for my $c (@calls) {
    my ($x, $sql) = @$c;
    my (@rows, $n);
    for (1 .. 2) {
        $n += served(sub { $d->selectall_arrayref($sql) });
        push @rows, logged($x);             # not through the cache
    }
    is($n, 2, "\"$sql\" twice: both reach the server");
    # a call a row read: as many rows the second time as the first
    ok($rows[0] > 0 && $rows[1] == 2 * $rows[0],
       "and the function wrote its rows both times (@rows)");
}

# a rule with a ttl alone does not let it be cached
is(served(sub { $d->selectrow_array('SELECT cfn_audit(6) AS cfn_plain')
                    for 1 .. 2 }), 2,
   'a matching rule with ttl= alone does not cache a stored function');

# --- built-ins are still cached ----------------------------------------------

my $builtins = "SELECT v, COUNT(*), CONCAT(v, 'x'), "
    . "MAX(DATE_FORMAT(d, '%Y')), ROW_NUMBER() OVER (ORDER BY v) "
    . "FROM cfn_t WHERE id IN (1, 2, 3) GROUP BY v";
is(served(sub { $d->selectall_arrayref($builtins) for 1 .. 3 }), 1,
   'built-in functions, a window function, IN (...): cached');

# --- cache_stored_functions: a deterministic one is cached -------------------

my @r;
is(served(sub { push @r, $d->selectrow_array('SELECT test.cfn_double(21)')
                    for 1 .. 3 }), 1,
   'a rule with cache_stored_functions caches the deterministic function');
is("@r", '42 42 42', 'with its answer');

# --- a call invalidates: the function may have written anything -------------

my $cq = 'SELECT COUNT(*) FROM cfn_log';
my ($c0) = $d->selectrow_array($cq);
is(served(sub { $d->selectrow_array($cq) }), 0, 'a read of the log table '
   . 'is kept');
$d->selectrow_array('SELECT cfn_audit(7)');
my $c1;
is(served(sub { ($c1) = $d->selectrow_array($cq) }) . " $c1",
   '1 ' . ($c0 + 1), 'after a call of a stored function it reaches the '
   . 'server again, with the row the function wrote');
$d->selectrow_array($cq);
$d->selectrow_array('SELECT test.cfn_double(4)');
is(served(sub { $d->selectrow_array($cq) }), 0, 'a function a rule says '
   . 'is pure (cache_stored_functions) invalidates nothing');

# --- the counter --------------------------------------------------------------

my $off = length $t->error_log;
$t->signal('USR2');
my $line;
wait_for(sub {
    ($line) = substr($t->error_log, $off)
        =~ /(cache zone "qc": not cacheable:.*)/;
    $line }, what => 'the counters');
my ($n) = ($line // '') =~ /\bstored_function=(\d+)/;
cmp_ok($n // 0, '>=', 12, 'the counters log stored_function');
