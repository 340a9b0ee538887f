#!/usr/bin/perl

# What an anonymous client sends before it is authenticated reaches the
# error log escaped: a newline in a user or database name cannot forge a
# log line, an escape sequence cannot reach the operator's terminal, and
# over-long names are refused with a reason that says which field was too
# long (not whatever an uninitialised pointer held).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet raw_connect parse_greeting
                    native_token handshake_response read_err);

my $t = Sluice::Test->new;
$t->has('readconn');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 64; }
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(9);

# Log in as $user (with database $db if defined) with password 'secret';
# returns the first packet of the answer.
sub login {
    my (%o) = @_;
    my $s = raw_connect($t->port(0));
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or return undef;
    send_packet($s, 1, handshake_response(user => $o{user}, db => $o{db},
        token => native_token('secret', $g->{scramble})));
    my $err = read_err($s);
    close $s;
    return $err;
}

# --- log injection --------------------------------------------------------

my $forged = "[alert] 1: forged by a client";
# the escaped user name still holds the text "[alert]", inside a line
$t->allow_log(qr/forged by a client/);
my $err = login(user => "evil\n2026/11/24 00:00:00 $forged");
is($err && $err->{code}, 1045, 'a user name with a newline: ERR 1045');
ok(wait_for(sub { $t->grep_log(qr/evil\\x0a2026/) },
    what => 'the escaped user'), 'the newline is logged as \x0a');
is(scalar $t->grep_log(qr/^\Q2026\/11\/24 00:00:00 $forged\E/), 0,
    'no forged line in the log');

$err = login(user => "term\e]2;pwned\a\e[31m");
is($err && $err->{code}, 1045, 'a user name with escape sequences: ERR 1045');
ok(wait_for(sub { $t->grep_log(qr/term\\x1b\]2;pwned\\x07\\x1b\[31m/) },
    what => 'the escaped user'), 'ESC and BEL are logged escaped');
my $raw = $t->error_log;
ok($raw !~ /[\x00-\x08\x0b-\x1f\x7f]/, 'no control byte anywhere in the log');

# --- over-long names before auth -----------------------------------------

$err = login(user => 'u' x 400);
is($err && $err->{code}, 1043, 'a 400-byte user name: Bad handshake');
ok(wait_for(sub { $t->grep_log(
    qr/bad handshake response: user name longer than 384 bytes/) },
    what => 'the reason'), 'the log says the user name was too long');

login(user => 'app', db => 'd' x 300);
ok(wait_for(sub { $t->grep_log(
    qr/bad handshake response: database name longer than 256 bytes/) },
    what => 'the reason'), 'the log says the database name was too long');
