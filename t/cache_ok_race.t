#!/usr/bin/perl

# Regression: a read sent after a write's OK could be served the entry
# the write made stale.  The cache invalidated a write's tables when the
# whole response to its command had ended, which is after its OK reached
# the client: a client that has the OK of `UPDATE t8 ...; SELECT <32 MB>`
# (MULTI_STATEMENTS) and has not read the rest, or the OK of `COMMIT;
# SELECT <32 MB>` after an UPDATE in the transaction, knows the write is
# done, yet another session was served the old row for as long as that
# response took.  What must hold: once a client has seen the OK of a
# write (or of its COMMIT), no read sent afterwards, by any session on
# any worker, is answered from an entry older than the write: the
# deterministic forms above, and a bounded stress where a writer
# increments v and after each OK a reader on the other worker reads it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(raw_session query read_packet send_packet);

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my ($ta, $tb, $tc) = map { $t->name . "_t8$_" } qw(a b c);
for my $tab ($ta, $tb, $tc) {
    $p->do("CREATE OR REPLACE TABLE test.$tab (id INT PRIMARY KEY, v INT) "
           . 'ENGINE=InnoDB');
    $p->do("INSERT INTO test.$tab VALUES (1, 1)");
}
END { eval { $t->primary_dbh->do("DROP TABLE IF EXISTS test.$ta, "
                                  . "test.$tb, test.$tc") } if $t }

$t->run_cache(plan => 18, workers => 2);

use constant {
    MULTI => 0x10000 | 0x20000,     # MULTI_STATEMENTS, MULTI_RESULTS
    MORE_RESULTS => 0x0008,         # SERVER_MORE_RESULTS_EXISTS
};

# Queries reaching the server while $code runs.
sub served { Sluice::Test::status_delta($p, 'Com_select', $_[0]) }

# A logged-in raw session in test: { sock, id (sluice's session id),
# scramble }; caps => C adds capability bits.
sub session { raw_session($t->port(0), db => 'test', @_) }

# Close W, whose response sluice is still sending, and wait until sluice
# has ended its session (and so done with what that response left).
sub close_w {
    my ($w) = @_;
    close $w->{sock};
    return wait_for(sub { $t->grep_log(
        qr/\*\Q$w->{id}\E client (?:closed|write failed)/) },
        what => "the end of session $w->{id}");
}

sub col0 {
    my ($r) = @_;
    return $r && $r->{rows} && @{ $r->{rows} } ? $r->{rows}[0][0] : undef;
}

# The status flags of an OK payload.
sub ok_status {
    my ($pl) = @_;
    return defined $pl && ord $pl == 0
        ? Sluice::Wire::_ok_fields($pl)->{status} : undef;
}

# 32 rows of 1 MB: more than the sockets between the server, sluice and
# an idle client hold, so the response cannot end while W reads nothing.
my $big = "SELECT REPEAT('x', 1000000) FROM seq_1_to_32";

# --- the OK of an UPDATE followed by a big result ---------------------------

my $qa = "SELECT v FROM $ta WHERE id = 1";
my $r = session();
is(col0(query($r->{sock}, $qa)), 1, 'a reader keeps t8a: 1');
is(served(sub { query($r->{sock}, $qa) }), 0, 'it is a hit');
my $w = session(caps => MULTI);
ok($w, 'a session W with MULTI_STATEMENTS and MULTI_RESULTS');
send_packet($w->{sock}, 0, "\x03UPDATE $ta SET v = 2 WHERE id = 1; $big");
my (undef, $ok) = read_packet($w->{sock});
ok(defined $ok && ord $ok == 0 && (ok_status($ok) // 0) & MORE_RESULTS,
   'W sends `UPDATE t8a SET v = 2; SELECT <32 MB>` and reads only the '
   . 'UPDATE\'s OK (more results flagged)');
is(scalar $p->selectrow_array("SELECT v FROM test.$ta WHERE id = 1"), 2,
   'the server holds 2');
my $o = session();
is(col0(query($o->{sock}, $qa)), 2, 'another session reads t8a after the '
   . 'OK: 2');
is(col0(query($r->{sock}, $qa)), 2, 'and so does the reader');
ok(close_w($w), 'W hangs up: sluice ends its session');

# --- the OK of a COMMIT followed by a big result ----------------------------

my $qb = "SELECT v FROM $tb WHERE id = 1";
is(col0(query($r->{sock}, $qb)), 1, 'the reader keeps t8b: 1');
is(served(sub { query($r->{sock}, $qb) }), 0, 'it is a hit');
$w = session(caps => MULTI);
ok(query($w->{sock}, 'BEGIN')->{ok}
   && query($w->{sock}, "UPDATE $tb SET v = 2 WHERE id = 1")->{ok},
   'W: BEGIN; UPDATE t8b SET v = 2');
send_packet($w->{sock}, 0, "\x03COMMIT; $big");
(undef, $ok) = read_packet($w->{sock});
ok(defined $ok && ord $ok == 0 && (ok_status($ok) // 0) & MORE_RESULTS,
   'W sends `COMMIT; SELECT <32 MB>` and reads only the COMMIT\'s OK');
is(scalar $p->selectrow_array("SELECT v FROM test.$tb WHERE id = 1"), 2,
   'the server holds 2');
$o = session();
is(col0(query($o->{sock}, $qb)), 2, 'another session reads t8b after the '
   . 'OK: 2');
is(col0(query($r->{sock}, $qb)), 2, 'and so does the reader');
ok(close_w($w), 'W hangs up: sluice ends its session');
close $_->{sock} for $o, $r;

# --- stress: a writer and a reader on the two workers ----------------------

# The greeting's thread id is sluice's session id; the log says which
# worker accepted it.
sub worker_of {
    my ($s) = @_;
    my ($l) = $t->grep_log(qr/\*\Q$s->{id}\E accepted/) or return 0;
    return $l =~ /\] (\d+): / ? $1 : 0;
}
my ($wr, $rd);
{
    my @open;
    for (1 .. 40) {
        my $sess = session() or next;
        push @open, $sess;
        wait_for(sub { $sess->{worker} = worker_of($sess) }, timeout => 2);
        $wr //= $sess;
        if ($sess->{worker} && $wr->{worker}
            && $sess->{worker} != $wr->{worker})
        {
            $rd = $sess;
            last;
        }
    }
    close $_->{sock} for grep { $_ != ($wr // 0) && $_ != ($rd // 0) } @open;
}
ok($wr && $rd, 'a writer and a reader on different workers');

my $qc = "SELECT v FROM $tc WHERE id = 1";
my ($i, $behind, $deadline) = (1, undef, time + 3);
if ($wr && $rd) {
    query($rd->{sock}, $qc);
    while ($i < 3000 && time < $deadline) {
        my $u = query($wr->{sock}, "UPDATE $tc SET v = v + 1 WHERE id = 1");
        last unless $u && $u->{ok};
        $i++;
        my $got = col0(query($rd->{sock}, $qc));
        if (!defined $got || $got < $i) {
            $behind = "after the OK of v = $i the reader read "
                . ($got // 'nothing');
            last;
        }
    }
    close $_->{sock} for $wr, $rd;
}
ok(!$behind && $i > 100, "the reader never read behind the last "
   . "acknowledged write (" . ($i - 1) . ' increments)')
    or diag($behind // 'too few increments');
