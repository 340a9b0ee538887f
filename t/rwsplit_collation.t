#!/usr/bin/perl

# Regression (issue 20): a collation id over 255, which only
# COM_CHANGE_USER can carry (its field is 2 bytes), was cut to its low
# byte when readwritesplit logged a replica backend in for the session
# (HandshakeResponse41's field is 1 byte): utf8mb4_uca1400_ai_ci (2304)
# became id 0, the server's default, silently.  Now the login carries a
# collation of the same character set and the backend sets the real one
# (SET collation_connection = ID) before it is ready: the replica's
# session has what the server itself makes of that COM_CHANGE_USER.  A
# collation the replica refuses fails that backend with the reason
# logged, and the read still gets its answer.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query change_user);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

my ($pid, $rid) = $t->run_rwsplit(plan => 13);
my $vars = '@@server_id, @@collation_connection, @@character_set_client, '
    . '@@character_set_results, @@character_set_connection';

sub row0 { my ($r) = @_; return $r && $r->{rows} ? $r->{rows}[0] : undef }

# What the server makes of COM_CHANGE_USER with collation `id`: the
# variables after it, on a session of our own to `port`, less server_id.
sub direct {
    my ($port, $id) = @_;
    my $s = raw_session($port, db => 'test') or return undef;
    my $cu = change_user($s, user => 'app', password => 'secret',
                         db => 'test', charset => $id);
    return undef unless $cu && $cu->{ok};
    my $r = row0(query($s->{sock}, "SELECT $vars"));
    close $s->{sock};
    return $r ? [ @$r[1 .. $#$r] ] : undef;
}

# Through sluice: change_user to collation `id` before any read, then
# reads until one runs on the replica (the backend opened for it logs in
# with the session's collation); its variables, less server_id.
sub via_replica {
    my ($id) = @_;
    my $s = raw_session($t->port(0), db => 'test') or return undef;
    my $cu = change_user($s, user => 'app', password => 'secret',
                         db => 'test', charset => $id);
    return undef unless $cu && $cu->{ok};
    my $r;
    wait_for(sub {
        $r = row0(query($s->{sock}, "SELECT $vars"));
        return $r && $r->[0] == $rid;
    }, what => "a read on the replica after collation $id");
    close $s->{sock};
    return $r && $r->[0] == $rid ? [ @$r[1 .. $#$r] ] : undef;
}

# utf8mb4_uca1400_ai_ci: MariaDB's UCA 14.0 utf8mb4 collations are 2304 on
my $want = direct($t->replica_port, 2304);
is_deeply($want, [ ('utf8mb4_uca1400_ai_ci', 'utf8mb4', 'utf8mb4',
                    'utf8mb4') ],
          'directly, COM_CHANGE_USER to 2304 is utf8mb4_uca1400_ai_ci');
my $got = via_replica(2304);
ok($got, 'through readwritesplit, change_user(2304) then a replica read');
is($got && $got->[0], 'utf8mb4_uca1400_ai_ci',
   'the replica backend has the collation asked for, not its low byte');
is_deeply($got, $want, 'and the same character sets as the server sets');

# a NO PAD collation of a one-byte set: the login's stand-in is of the
# same set (latin1), so the client's character set is latin1 as directly
$want = direct($t->replica_port, 1032);
is($want && $want->[0], 'latin1_swedish_nopad_ci',
   'directly, 1032 is latin1_swedish_nopad_ci');
$got = via_replica(1032);
is_deeply($got, $want, 'through readwritesplit the replica has it too, '
          . 'character_set_client latin1');

# a utf8mb3 UCA 14.0 one (2048): the stand-in is utf8mb3
$want = direct($t->replica_port, 2048);
is($want && $want->[0], 'utf8mb3_uca1400_ai_ci',
   'directly, 2048 is utf8mb3_uca1400_ai_ci');
is_deeply(via_replica(2048), $want,
          'through readwritesplit the replica has it, utf8mb3 throughout');

# the common case: an id under 256 is carried by the login, no SET
is_deeply(via_replica(224), direct($t->replica_port, 224),
          'utf8mb4_unicode_ci (224) as directly');

# An id the server does not know: the server itself falls back to its
# default on COM_CHANGE_USER; the replica refuses the SET, its backend
# fails with the reason logged, and the read is answered all the same.
my $s = raw_session($t->port(0), db => 'test');
my $cu = change_user($s, user => 'app', password => 'secret', db => 'test',
                     charset => 4000);
ok($cu && $cu->{ok}, 'change_user to an unknown collation id (4000): OK, '
   . 'as the server answers it');
my $r = row0(query($s->{sock}, 'SELECT 1'));
is($r && $r->[0], 1, 'a read after it is answered');
ok(wait_for(sub { $t->grep_log(qr/refused collation 4000: 1273 /) },
            what => 'the refusal in the log'),
   'the replica backend failed: "refused collation 4000" is logged');
$r = row0(query($s->{sock}, 'SELECT @@server_id'));
is($r && $r->[0], $pid, 'reads then go to the primary');
close $s->{sock};
