#!/usr/bin/perl

# `sluice -s status` and `-s stats` (issue 23, section 1): the status
# printed to the terminal, from the running instance's status listener
# (GET /status/text), whether it listens on TCP or on a unix socket; a
# clear error when the listener cannot be reached or the configuration
# has none (`stats` then signals the master to log its counters, as it
# always did).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use IO::Socket::UNIX;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('status', 'readconn');

my $conf = <<'EOF';
worker_processes 2;
status_listen 127.0.0.1:%%PORT_1%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream db { server %%PRIMARY%% role=primary; }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db; }
}
EOF
$t->write_file_expand('sluice.conf', $conf);
my $written = $t->read_file('sluice.conf');     # the harness's globals in
$t->run;
$t->plan(16);

# sluice -s NAME with a configuration file: (exit code, stdout, stderr)
sub ctl {
    my ($name, $file) = @_;
    my ($rc, $out, $err) = $t->_capture(cmd => [ $t->binary, '-p',
        $t->testdir . '/', '-c', $t->testdir . '/' . ($file // 'sluice.conf'),
        '-s', $name ]);
    return ($rc, $out // '', $err // '');
}

my $d = $t->dbh;
$d->selectrow_array('SELECT 1') for 1 .. 10;
my $listener = '127.0.0.1:' . $t->port(0);

my ($rc, $out, $err);
ok(wait_for(sub { ($rc, $out, $err) = ctl('status');
                  $rc == 0 && $out =~ /^sessions_accepted_total$/m },
            what => 'sluice -s status'), 'sluice -s status: exit 0')
    or diag("rc $rc, stderr: $err");
like($out, qr/^build_info\n  version=\S+ modules=\S*readconn\S*  1$/m,
     'the build, labels unquoted');
like($out, qr/^  listener=\Q$listener\E worker=\d  1$/m,
     'the open session, by listener and worker');
my $ms = qr/[\d.e+-]+ ms/;
my $hist = "route=primary  count (\\d+) mean $ms p50 <= $ms p99 <= $ms";
my ($count) = $out =~ /^query_duration_seconds\n  listener=\Q$listener\E $hist$/m;
cmp_ok($count // 0, '>=', 10, 'the query durations as count, mean and '
       . 'quantile bounds');
unlike($out, qr/^#|\{|  0$/m, 'no HELP or TYPE lines, braces or zeros');
is($err, '', 'nothing on stderr');

my ($rc2, $out2) = ctl('stats');
is($rc2, 0, 'sluice -s stats: exit 0');
my $cmds = 'worker=\d command=query  \d+';
like($out2, qr/^commands_total\n  listener=\Q$listener\E $cmds$/m,
     '... prints the same status');

# a listener nobody answers on
my $port2 = $t->port(2);
(my $gone = $written) =~ s/status_listen [^;]*;/status_listen 127.0.0.1:$port2;/;
$t->write_file('gone.conf', $gone);
($rc, $out, $err) = ctl('status', 'gone.conf');
is($rc, 1, 'a listener that does not answer: exit 1');
my $why = 'cannot reach the status listener 127\.0\.0\.1:' . $port2
          . ' \(Connection refused\): is sluice running\?';
like($err, qr/^sluice: $why$/m, '... and says why');

# no status_listen at all
(my $none = $written) =~ s/status_listen [^;]*;\n//;
$t->write_file('none.conf', $none);
($rc, $out, $err) = ctl('status', 'none.conf');
ok($rc == 1 && $err =~ /configuration has no status_listen/,
   'no status_listen: -s status is an error that says so') or diag($err);
($rc, $out, $err) = ctl('stats', 'none.conf');
ok($rc == 0 && $err =~ /the master logs the counters/,
   '... -s stats signals the master to log them instead') or diag($err);

# a unix socket, after a reload
my $sock = $t->testdir . '/status.sock';
(my $unix = $conf) =~ s/127\.0\.0\.1:%%PORT_1%%/unix:$sock/;
$t->write_file_expand('sluice.conf', $unix);
ok($t->reload, 'a reload to a unix socket');
ok(wait_for(sub { ($rc, $out, $err) = ctl('status'); $rc == 0 },
            what => 'the unix socket listener'),
   'sluice -s status over the unix socket');
like($out, qr/^sessions_accepted_total\n  listener=\Q$listener\E/m,
     '... with the counts of before the reload');
my $u = IO::Socket::UNIX->new(Peer => $sock);
print {$u} "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
my $all = do { local $/; <$u> } // '';
like($all, qr/\AHTTP\/1\.1 200 OK\r\n.*^sluice_config_generation 2$/ms,
     'GET /metrics over the unix socket');
