#!/usr/bin/perl

# Regression (issue 19, item 6): readwritesplit's own last_gtid tracking
# was visible to clients: SELECT @@session_track_system_variables on the
# primary returned a list the client never set, and a client that
# negotiated session tracking received last_gtid entries it never asked
# for.  Now the client reads the list it set and its OKs carry only what
# it asked for; a client that asks for last_gtid itself gets it; the
# router still learns the session's GTIDs (a read after a write goes to
# a replica that has it, or to the primary, never a stale one).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session send_packet read_packet);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($pid, $rid) = $t->run_rwsplit(plan => 15);
my $P = $t->primary_dbh;
$P->do('CREATE OR REPLACE TABLE test.rws_gh (id INT PRIMARY KEY)');

use constant SESSION_TRACK => 0x00800000;

# COM_QUERY on a raw session: the first packet of the answer.
sub first_packet {
    my ($s, $sql) = @_;
    send_packet($s->{sock}, 0, "\x03$sql");
    my (undef, $pl) = read_packet($s->{sock});
    return $pl // '';
}

# A one-column, one-row SELECT on a raw session: the row's packet.
sub value_packet {
    my ($s, $sql) = @_;
    my $n = first_packet($s, $sql);
    return "error $n" if ord($n) != 1;
    my @p = map { (read_packet($s->{sock}))[1] // '' } 1 .. 4;
    return $p[2];               # definition, EOF, the row, EOF
}

my $direct = raw_session($t->primary_port, db => 'test', caps => SESSION_TRACK);
my $ok = first_packet($direct, 'INSERT INTO rws_gh VALUES (1)');
is(ord $ok, 0, 'directly: an INSERT, OK');
unlike($ok, qr/last_gtid/, 'directly: its OK names no last_gtid');

my $d0 = $t->dbh(port => $t->primary_port);
my ($server_list) = $d0->selectrow_array(
    'SELECT @@session.session_track_system_variables');

my $s = raw_session($t->port(0), db => 'test', caps => SESSION_TRACK);
$ok = first_packet($s, 'INSERT INTO rws_gh VALUES (2)');
is(ord $ok, 0, 'through sluice: an INSERT, OK');
unlike($ok, qr/last_gtid/, 'through sluice: its OK names no last_gtid');
$ok = first_packet($s, 'UPDATE rws_gh SET id = 3 WHERE id = 2');
unlike($ok, qr/last_gtid/, 'nor does the next write\'s');
first_packet($s, 'BEGIN');
my $list = value_packet($s, 'SELECT @@session.session_track_system_variables');
like($list, qr/time_zone/, 'inside a transaction: the list (on the primary)');
unlike($list, qr/last_gtid/, 'is the client\'s');
first_packet($s, 'COMMIT');

my $d = $t->dbh;
$d->begin_work;
is(($d->selectrow_array('SELECT @@session.session_track_system_variables'))[0],
   $server_list, 'DBD, on the primary: the list the server gives');
is(($d->selectrow_array('SELECT @@server_id'))[0], $pid, '(on the primary)');
$d->commit;
ok($d->do('INSERT INTO rws_gh VALUES (4)'), 'a write after it');
ok(wait_for(sub { ($d->selectrow_array(
        'SELECT COUNT(*) FROM rws_gh WHERE id = 4'))[0] == 1 }, timeout => 5),
   'and the read after it sees it (tracking went on)');

# a client that asks for last_gtid gets it
my $c = raw_session($t->port(0), db => 'test', caps => SESSION_TRACK);
is(ord first_packet($c, q{SET session_track_system_variables = }
                        . q{'last_gtid'}), 0, 'a client asks for last_gtid');
$ok = first_packet($c, 'INSERT INTO rws_gh VALUES (5)');
like($ok, qr/last_gtid/, 'its write\'s OK carries last_gtid');
$ok = first_packet($c, 'INSERT INTO rws_gh VALUES (6)');
like($ok, qr/last_gtid/, 'and the next one\'s');
is($P->selectrow_array('SELECT COUNT(*) FROM rws_gh'), 5, 'every write made');
