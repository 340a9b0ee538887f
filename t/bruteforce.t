#!/usr/bin/perl

# The brake on password guessing (auth local): after
# auth_failure_threshold failed logins in a row from one address, the
# answers to that address wait, doubling from auth_failure_delay up to
# auth_failure_max_delay, right password or wrong (as MySQL's
# connection_control); a right one resets the count.  The wait is a timer:
# other clients are served meanwhile, and a client hanging up during it
# is closed at once.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Select;
use IO::Socket::INET;
use Socket qw(SO_RCVTIMEO);
use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_connect parse_greeting
                    native_token handshake_response);

my $t = Sluice::Test->new;
$t->has('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        auth_failure_threshold 3;
        auth_failure_delay 100ms;
        auth_failure_max_delay 1s;
    }
}
EOF
$t->run;
$t->plan(12);

# A connected socket from address $from that has sent its login; its next
# packet answers the login.
sub send_login {
    my ($password, $from) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
        PeerPort => $t->port(0), LocalAddr => $from // '127.0.0.1',
        Timeout => 5) or die "connect from " . ($from // '127.0.0.1')
        . ": $!\n";
    $s->sockopt(SO_RCVTIMEO, pack('l!l!', 10, 0));
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or die "no greeting\n";
    send_packet($s, 1, handshake_response(user => 'app',
        token => native_token($password, $g->{scramble})));
    return $s;
}

# 'OK' or the ERR code.
sub answer {
    my ($s) = @_;
    my (undef, $pl) = read_packet($s);
    return 'nothing' unless defined $pl && length $pl;
    return 'OK' if ord($pl) == 0;
    return ord($pl) == 0xff ? unpack('x v', $pl) : 'other';
}

sub login {
    my ($password, $from) = @_;
    my $s = send_login($password, $from);
    my $a = answer($s);
    close $s;
    return $a;
}

sub delayed_lines { scalar $t->grep_log(qr/answer to the login delayed/) }

# 3 free failures, then 100, 200, 400, 800 ms and 1 s thrice: 4.5 s.
my $start = time;
my @a = map { login('wrong') } 1 .. 10;
my $took = time - $start;
is("@a", join(' ', (1045) x 10), '10 wrong passwords: 10 ERR 1045');
cmp_ok($took, '>=', 4.5, sprintf '10 wrong passwords in a row take at least '
       . 'the 4.5 s of delays after the first 3 (%.2f s)', $took);
is(delayed_lines(), 7, 'the last 7 answers were delayed (log)');

# While an 11th wrong one waits for its answer (1 s), a client from
# another address logs in at once.
my $slow = send_login('wrong');
my $fast = eval { send_login('secret', '127.0.0.2') };
SKIP: {
    skip "cannot bind 127.0.0.2: $@", 2 unless $fast;
    is(answer($fast), 'OK', 'a client from another address logs in during '
       . 'a delayed answer');
    ok(!IO::Select->new($slow)->can_read(0),
       'before the delayed client has its answer');
    close $fast;
}
is(answer($slow), 1045, 'then the delayed one gets its ERR 1045');

# The right password from the guessing address: answered late too (or a
# client could take a slow answer for "wrong"), and it resets the count.
my $n = delayed_lines();
$start = time;
is(login('secret'), 'OK', 'the right password from that address logs in');
$took = time - $start;
cmp_ok($took, '>=', 1, sprintf 'after the delay, like a wrong one (%.2f s)',
       $took);
is(login('secret') . ' ' . login('wrong'), 'OK 1045',
   'after it, a login and a failure');
is(delayed_lines(), $n + 1, 'are answered without delay: the count was '
   . 'reset');

# A client hanging up while its answer waits (1 s) is closed then, not
# when the answer is due ("closed after error", "client write failed").
login('wrong') for 1 .. 6;
my $off = length $t->error_log;
my $gone = send_login('wrong');
ok(wait_for(sub { substr($t->error_log, $off) =~ /delayed by 1000 ms/ },
            what => 'the delay'), 'a client waiting 1 s for its answer');
close $gone;
ok(wait_for(sub { substr($t->error_log, $off) =~ /client closed/ },
            what => 'the hang-up'), 'is closed when it hangs up');
