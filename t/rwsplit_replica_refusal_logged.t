#!/usr/bin/perl

# A replica that refuses a readwritesplit session's connection (issue 19):
# the read runs on the primary and the client never knows, yet the log
# said `[error] backend refused: 1040 ...` in a line whose context named
# the session's own backend, the primary.  Now the line names the server
# that refused, at info; the client-visible outcome is logged by whoever
# answers the client.  The session's own backend refused keeps its error.
# The replicas here are scripted (Sluice::FakeBackend): one refuses the
# connection with an ERR greeting, one greets and refuses the login.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::FakeBackend;
use Sluice::Test;
use Sluice::Wire qw(err_packet);

my $t = Sluice::Test->new;
$t->has('readwritesplit');

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream busy {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_1%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readwritesplit;
        upstream busy;
    }
    upstream denied {
        server %%PRIMARY%% role=primary;
        server 127.0.0.1:%%PORT_3%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readwritesplit;
        upstream denied;
    }
    upstream refusing {
        server 127.0.0.1:%%PORT_5%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        router readwritesplit;
        upstream refusing;
    }
}
EOF
my $too_many = err_packet(1040, '08004', 'Too many connections');
my $busy = Sluice::FakeBackend->new(port => $t->port(1),
    script => [ [ greeting => $too_many ], 'close' ]);
my $denied = Sluice::FakeBackend->new(port => $t->port(3), script => [
    'greeting', 'read',
    [ packet => 2, err_packet(1045, '28000', "Access denied for user 'app'") ],
    'close' ]);
my $own = Sluice::FakeBackend->new(port => $t->port(5),
    script => [ [ greeting => $too_many ], 'close' ]);
$t->run;
$t->plan(14);

my $P = $t->primary;
my $pid = $t->primary_dbh->selectrow_array('SELECT @@server_id');

# Reads through PORT_N: how many of 3 the primary answered.
sub reads {
    my ($port) = @_;
    my $d = $t->dbh(port => $t->port($port)) or return 0;
    return scalar grep { ($d->selectrow_array('SELECT @@server_id') // 0)
                         == $pid } 1 .. 3;
}

# --- a replica refuses the connection ------------------------------------

is(reads(0), 3, 'a replica refusing the connection: every read is '
   . 'answered, by the primary');
ok($busy->saw(qr/^accept/), 'the replica was asked');
my $R = '127.0.0.1:' . $t->port(1);
my @l = $t->grep_log(qr/1040 Too many connections/);
ok(@l >= 1, 'the refusal is logged');
ok(!grep({ !/\[info\]/ } @l), 'at info') or diag(join "\n", @l);
ok(!grep({ !/backend server '\Q$R\E' refused/ } @l),
   'naming the replica that refused') or diag(join "\n", @l);
ok($t->grep_log(qr/\[info\].*backend server '\Q$R\E' failed \(the server /
                . qr/refused the connection\): the command runs on '\Q$P\E'/),
   'the read run on the primary instead is logged at info');
ok(!$t->grep_log(qr/\[(?:error|crit|alert)\]/),
   'nothing at error: the client saw nothing')
    or diag(join "\n", $t->grep_log(qr/\[(?:error|crit|alert)\]/));

# --- a replica refuses the login --------------------------------------------

is(reads(2), 3, 'a replica refusing the login: every read is answered, by '
   . 'the primary');
ok($denied->saw(qr/^read \d+ 1 /), 'the replica got the login');
my $D = '127.0.0.1:' . $t->port(3);
@l = $t->grep_log(qr/1045 Access denied/);
ok(@l >= 1 && !grep({ !/\[info\] .*backend server '\Q$D\E' refused/ } @l),
   'the refused login is logged at info, naming the replica')
    or diag(join "\n", @l);
ok(!$t->grep_log(qr/\[(?:error|crit|alert)\]/), 'nothing at error');

# --- the session's own backend refused ---------------------------------------

my $off = length $t->error_log;
ok(!$t->dbh(port => $t->port(4)), 'the primary refusing: no session');
like($DBI::errstr, qr/Too many connections/, 'the client hears why');
my $O = '127.0.0.1:' . $t->port(5);
like(substr($t->error_log, $off),
     qr/\[error\] .*backend refused: 1040 Too many .*backend: \Q$O\E/,
     'logged at error, as before: the client saw it');
