#!/usr/bin/perl

# The cache filter (issue 10): a worker killed with SIGKILL while it holds
# the cache zone's lock does not wedge the others.  A test hook of the
# test filter (t/modules/testfilter, ./configure --with-test-modules)
# makes worker A take the zone's lock and block inside it for ever; a
# lookup on worker B then waits on the lock; A is killed; the master
# releases the lock of the dead process (and says so), B's lookup is
# served the entry, and so are new sessions on B and on A's replacement;
# a new SELECT is stored and hit, a write invalidates.  Whether the
# server answered is told by its Com_select; every read has a deadline
# (Sluice::Wire's receive timeout), so a wedged proxy fails, not hangs.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use IO::Select;
use Sluice::Test;
use Sluice::Wire qw(read_packet packet send_packet raw_connect
                    parse_greeting native_token handshake_response);

my $t = Sluice::Test->new;
$t->has('testfilter', 'cache', 'readconn');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE test.lockkill_t (id INT PRIMARY KEY, '
       . 'v VARCHAR(32))');
$p->do("INSERT INTO test.lockkill_t VALUES (1, 'one'), (2, 'two')");

$t->run_cache(plan => 22, workers => 2,
             filters => 'testfilter cache');

# --- helpers -----------------------------------------------------------------

# A logged-in raw client and its session id (the greeting's thread id).
sub login {
    my $s = raw_connect($t->port(0));
    my (undef, $g) = read_packet($s);
    my $gr = parse_greeting($g) or return;
    my ($id) = unpack 'V', substr($g, index($g, "\0", 1) + 1, 4);
    send_packet($s, 1, handshake_response(user => 'app',
        token => native_token('secret', $gr->{scramble})));
    my (undef, $ok) = read_packet($s);
    return defined $ok && ord($ok) == 0 ? ($s, $id) : ();
}

# The pid of the worker that accepted session $id, 0 if not logged.
sub worker_of {
    my ($id) = @_;
    my ($l) = $t->grep_log(qr/\*\Q$id\E accepted/) or return 0;
    return $l =~ /\] (\d+): / ? $1 : 0;
}

# One logged-in session on each running worker: { pid => socket }.
sub on_each_worker {
    my %want = map { $_ => 1 } $t->worker_pids;
    my %on;
    for (1 .. 40) {
        my ($s, $id) = login() or next;
        my $w = worker_of($id);
        $on{$w} //= $s if $want{$w};
        last if keys %on == keys %want;
    }
    return \%on;
}

# lenenc string (short ones: these results are small), undef for NULL.
sub lenenc_str {
    my ($pl, $off) = @_;
    my $n = ord substr($pl, $$off++, 1);
    return undef if $n == 0xfb;
    my $v = substr($pl, $$off, $n);
    $$off += $n;
    return $v;
}

# The answer to a query sent already: its rows joined as "a:b,c:d", "OK",
# "ERR msg", or undef if none came before the receive timeout.
sub answer {
    my ($s) = @_;
    my (undef, $pl) = read_packet($s);
    return undef unless defined $pl;
    return 'ERR ' . substr($pl, 9) if ord $pl == 0xff;
    return 'OK' if ord $pl == 0;
    my @rows;
    for (my $eofs = 0; $eofs < 2; ) {
        (undef, $pl) = read_packet($s);
        return undef unless defined $pl;
        if (ord $pl == 0xfe && length $pl < 9) {
            $eofs++;
        } elsif ($eofs == 1) {
            my ($off, @f) = (0);
            push @f, lenenc_str($pl, \$off) // 'NULL' while $off < length $pl;
            push @rows, join ':', @f;
        }
    }
    return join ',', @rows;
}

sub query { my ($s, $sql) = @_; syswrite($s, packet(0, "\x03$sql")) }
sub ask   { my ($s, $sql) = @_; query($s, $sql); return answer($s) }

sub com_select { Sluice::Test::server_status($p, 'Com_select') }

# [queries that reached the server, the answer] of one query.
sub served {
    my ($s, $sql) = @_;
    my $before = com_select();
    my $a = ask($s, $sql);
    return [ com_select() - $before, $a ];
}

my $q = 'SELECT id, v FROM test.lockkill_t ORDER BY id';
my $rows = '1:one,2:two';
my $hold = "SELECT 'testfilter: hold shm zone cache/qc'";

# --- the hook and the entry --------------------------------------------------

my ($any) = login();
is(ask($any, "SELECT 'testfilter: hold shm zone nosuch'"),
   'testfilter: hold shm zone nosuch', 'the hook passes a zone that is none');
close $any;

my $on = on_each_worker();
my ($pa, $pb) = sort keys %$on;
ok($pa && $pb, 'a session on each of the 2 workers');
my ($sa, $sb) = @$on{$pa, $pb};

is_deeply(served($sb, $q), [ 1, $rows ], 'worker B: a miss, stored');
is_deeply(served($sb, $q), [ 0, $rows ], 'worker B: a hit');
is_deeply(served($sa, $q), [ 0, $rows ], 'worker A: a hit');

# --- A holds the zone's lock, B waits on it ---------------------------------

my $off = length $t->error_log;
query($sa, $hold);
my $holding = qr/\] \Q$pa\E: .*testfilter: holding the lock of shm /
              . qr/zone "cache\/qc" \(holder (\d+)\)/;
my $holder;
ok(wait_for(sub {
        ($holder) = substr($t->error_log, $off) =~ $holding;
        $holder }, what => 'worker A to hold the lock'),
   'worker A holds the lock of zone cache/qc');
is($holder, $pa, 'the lock records A as its holder');

# B's lookup spins on the lock: no answer while A lives
my $before = com_select();
query($sb, $q);
ok(!IO::Select->new($sb)->can_read(1), 'worker B waits on the lock');

# --- A killed ---------------------------------------------------------------

$off = length $t->error_log;
$t->kill_worker(pid => $pa);
my $released = qr/process \Q$pa\E died holding 1 lock\(s\) of shared /
               . qr/memory zone "cache\/qc": released/;
ok(wait_for(sub { substr($t->error_log, $off) =~ $released },
            what => 'the release of the lock'),
   'the master releases the lock of the killed worker');
my $b_answer = answer($sb);
is($b_answer, $rows, 'worker B goes on: its lookup is answered');
is(defined $b_answer ? com_select() - $before : 'no answer', 0,
   'from the cache');
is(answer($sa), undef, 'the held session is closed with its worker');

SKIP: {
    skip 'worker B is wedged', 10 unless defined $b_answer;

    # sessions on B and on A's replacement
    my $on2 = on_each_worker();
    my ($pn) = grep { $_ != $pb } keys %$on2;
    ok($pn && $pn != $pa && $on2->{$pb}, 'a session on B and on the new '
       . 'worker');
    my ($sn, $sb2) = @$on2{$pn, $pb};
    is_deeply(served($sn, $q), [ 0, $rows ], 'the new worker: a hit');
    is_deeply(served($sb2, $q), [ 0, $rows ], 'a new session on B: a hit');

    # a new entry: stored by one, hit by both
    my $q2 = 'SELECT v FROM test.lockkill_t WHERE id = 2';
    is_deeply(served($sn, $q2), [ 1, 'two' ], 'a new SELECT: a miss');
    is_deeply(served($sn, $q2), [ 0, 'two' ], 'then a hit');
    is_deeply(served($sb2, $q2), [ 0, 'two' ], 'on the other worker too');

    # a write invalidates, for both workers
    is(ask($sb2, "UPDATE test.lockkill_t SET v = 'deux' WHERE id = 2"), 'OK',
       'a write through B');
    is_deeply(served($sn, $q2), [ 1, 'deux' ], 'invalidates: the new '
              . 'worker asks the server');
    is_deeply(served($sb2, $q2), [ 0, 'deux' ], 'and B is served the new '
              . 'entry');
    is_deeply(served($sb2, $q), [ 1, '1:one,2:deux' ],
              'the first entry is gone too');
}
