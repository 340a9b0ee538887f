#!/usr/bin/perl

# Every form of `listen` carries a query end to end: PORT (all IPv4
# addresses), IPV4:PORT, [IPV6]:PORT, unix:PATH (DBI and the mariadb
# client), *:PORT; all in one server block with two workers, and both
# workers accept sessions on a shared TCP address.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use IO::Socket::IP;
use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');

# ::1 must be there to bind to and to connect from
my $has_v6 = IO::Socket::IP->new(Listen => 1, LocalHost => '::1',
                                 LocalPort => 0) ? 1 : 0;
my $v6_listen = $has_v6 ? 'listen [::1]:%%PORT_2%%;' : '';

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 200; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
    }
    server {
        listen %%PORT_0%%;
        listen 127.0.0.1:%%PORT_1%%;
        $v6_listen
        listen unix:%%TESTDIR%%/s.sock;
        listen *:%%PORT_3%%;
        router readconn;
        readconn_role primary;
        upstream cluster;
    }
}
EOF
$t->run;
$t->plan(22);

my $sock = $t->testdir . '/s.sock';
my $primary_port = $t->primary_port;

# A query through a listener: the primary answers, and the log says which
# listener accepted the session and from where.
sub through {
    my ($name, $text, $peer, %conn) = @_;
    my $dbh = $t->dbh(%conn);
    ok($dbh, "$name: connects") or diag($DBI::errstr);
    my $row = $dbh && $dbh->selectrow_arrayref(
        'SELECT @@server_id, @@port, CONCAT(\'via \', ?)', undef, $name);
    is_deeply($row, [1, $primary_port, "via $name"],
              "$name: a query reaches the primary")
        or diag($dbh && $dbh->errstr);
    ok($t->grep_log(qr/\] \d+: \*\d+ accepted on \Q$text\E, client: $peer,/),
       "$name: accepted on $text");
    $dbh->disconnect if $dbh;
}

through('listen PORT', $t->port(0), qr/127\.0\.0\.1:\d+/,
        port => $t->port(0));
through('listen 127.0.0.1:PORT', '127.0.0.1:' . $t->port(1),
        qr/127\.0\.0\.1:\d+/, port => $t->port(1));
SKIP: {
    skip 'no ::1 on this machine', 3 unless $has_v6;
    # DBD::MariaDB wants an IPv6 host in brackets: "host=::1" is misread
    through('listen [::1]:PORT', '[::1]:' . $t->port(2), qr/\[::1\]:\d+/,
            host => '[::1]', port => $t->port(2));
}
through('listen unix:PATH', "unix:$sock", qr/unix/, socket => $sock);
through('listen *:PORT', '*:' . $t->port(3), qr/127\.0\.0\.1:\d+/,
        port => $t->port(3));

# the mariadb client over the unix socket: host localhost and the last
# --protocol win over the harness's TCP options (whose port here has
# nothing listening, in case they did not)
my $unix_accepts = $t->grep_log(qr/accepted on \Qunix:$sock\E,/);
my ($rc, $out, $err) = $t->mysql_cli(host => 'localhost', port => $t->port(9),
    args => [ '-S', $sock, '--protocol=socket' ],
    sql => 'SELECT @@server_id, @@port');
is($rc, 0, 'mariadb -S: runs') or diag($err);
is($out, "1\t$primary_port\n", 'mariadb -S: the primary answers');
is($t->grep_log(qr/accepted on \Qunix:$sock\E,/), $unix_accepts + 1,
   'mariadb -S: through the unix socket');

# --- both workers accept --------------------------------------------------

my @workers = $t->worker_pids;
is(scalar @workers, 2, 'two workers run');

# Sessions on the shared 127.0.0.1:PORT_1 until both workers have
# accepted one: SO_REUSEPORT spreads connections by their address, so
# twenty or so connections reach both.
my $text = '127.0.0.1:' . $t->port(1);
my (@dbhs, %by_pid);
my $failed = 0;
my $both = wait_for(sub {
    my $dbh = $t->dbh(port => $t->port(1));
    if ($dbh && $dbh->selectrow_array('SELECT 1')) {
        push @dbhs, $dbh;
    } else {
        $failed++;
    }
    %by_pid = ();
    $by_pid{$_}++ for map { /\] (\d+): \*\d+ accepted on \Q$text\E,/ }
        $t->grep_log(qr/accepted on \Q$text\E,/);
    return @dbhs >= 20 && keys %by_pid >= 2;
}, timeout => 20, what => 'twenty sessions and both workers to accept');
ok($both, 'both workers accepted sessions on one address')
    or diag(explain \%by_pid);
is($failed, 0, 'every one of ' . scalar(@dbhs) . ' sessions worked');
is_deeply([ sort { $a <=> $b } keys %by_pid ], \@workers,
          'the pids that accepted are the two workers');
$_->disconnect for @dbhs;
