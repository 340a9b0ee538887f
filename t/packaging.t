#!/usr/bin/perl

# The Debian package, so that it cannot rot (issue 23, "Packaging for
# operators").  contrib/build-deb.sh builds it from the working tree into
# the test directory; lintian finds no error and no warning in it; unpacked
# into a scratch root (dpkg-deb -x), its unit, configuration and logrotate
# snippet agree on the paths and the user, and the binary is the version
# configure says.  Then, with the configuration's paths moved into the
# test directory and no privilege (nobody, no capability), the packaged
# sluice starts as systemd's Type=forking expects it to (the first process
# exits once the port is bound, the master writes its pid file), the
# logrotate snippet rotates its log and it reopens it, and it stops on
# QUIT.  systemd-analyze verify has nothing to say about the unit (no
# systemd needs to run), groff -ww nothing about the man pages, which
# name every option of sluice -h and every directive of
# docs/directives.md.  Needs no MariaDB.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use Test::More;
use Sluice::Test;
use Sluice::Sandbox qw(find_bin slurp pid_alive);

use constant {
    BUILD_TIMEOUT => 600,
    NOBODY        => 65534,
};

my $t = Sluice::Test->new;
my $top = $Sluice::Test::TOP;
my $dir = $t->testdir;

# program => the Debian package that has it (contrib/deps.sh installs all)
my %tool = (
    'dpkg-buildpackage' => 'dpkg-dev',  'dh'              => 'debhelper',
    'dpkg-deb'          => 'dpkg',      'lintian'         => 'lintian',
    'logrotate'         => 'logrotate', 'systemd-analyze' => 'systemd',
    'groff'             => 'groff-base', 'setpriv'        => 'util-linux',
    'gzip'              => 'gzip',
);
my %bin;
for my $p (sort keys %tool) {
    $bin{$p} = eval { find_bin($p) };
    $t->need($bin{$p}, "no $p (Debian's $tool{$p}; contrib/deps.sh)");
}

# cmd(PROGRAM, ARGS..., { run_client's options }): (exit code, stdout,
# stderr), killed after 30 s unless the options say otherwise
sub cmd {
    my (@cmd) = @_;
    my %o = ref $cmd[-1] eq 'HASH' ? %{ pop @cmd } : ();
    return $t->run_client(cmd => \@cmd, %o);
}

# the last $n lines of a build's output, for a diag
sub last_lines {
    my ($text, $n) = @_;
    my @l = split /\n/, $text;
    return join("\n", @l > $n ? @l[-$n .. -1] : @l) . "\n";
}

# --- the build and lintian -----------------------------------------------

my ($rc, $out, $err) = cmd('sh', "$top/contrib/build-deb.sh", "$dir/out",
    { env => { TMPDIR => $dir }, timeout => BUILD_TIMEOUT });
is($rc, 0, 'contrib/build-deb.sh builds the package')
    or diag(last_lines("$out$err", 40));
my ($deb) = glob("$dir/out/sluice_*.deb");
my ($changes) = glob("$dir/out/sluice_*.changes");
unless (ok($deb && $changes, 'the .deb and the .changes are in OUTDIR')) {
    $t->done_testing;
    exit;
}

# errors and warnings fail; info and pedantic tags are only shown (-v)
($rc, $out, $err) = cmd($bin{lintian}, '-I', '--pedantic',
    '--fail-on', 'error,warning', $changes, { timeout => 300 });
is($rc, 0, 'lintian: no error, no warning '
   . '(contrib/debian/sluice.lintian-overrides says why for the rest)')
    or diag($out, $err);
note("lintian: $out") if $out =~ /\S/;

# --- what the package holds ---------------------------------------------

# The scratch root, and the files of the unprivileged run below: in /tmp,
# where any user reaches them (the test directory's parents may be closed
# to nobody, as a clone under /root is).  Kept if the test fails.
my $scratch = tempdir('sluice-packaging-XXXXXX', DIR => '/tmp');
my $master;
END {
    kill 'TERM', $master if $master && pid_alive($master);
    my $keep = $ENV{SLUICE_TEST_KEEP} || !Test::More->builder->is_passing;
    if ($scratch && $keep) {
        diag("kept $scratch");
    } elsif ($scratch) {
        remove_tree($scratch);
    }
}
chmod 0755, $scratch;
my $root = "$scratch/root";
($rc, $out, $err) = cmd($bin{'dpkg-deb'}, '-x', $deb, $root);
is($rc, 0, 'dpkg-deb -x unpacks it into a scratch root') or diag($err);
for my $f (qw(usr/sbin/sluice etc/sluice/sluice.conf
              lib/systemd/system/sluice.service etc/logrotate.d/sluice
              usr/lib/sysusers.d/sluice.conf
              usr/share/man/man8/sluice.8.gz
              usr/share/man/man5/sluice.conf.5.gz
              usr/share/doc/sluice/directives.md.gz
              usr/share/doc/sluice/examples/sluice.conf))
{
    ok(-f "$root/$f", "/$f");
}
($rc, $out) = cmd($bin{'dpkg-deb'}, '-I', $deb, 'conffiles');
is_deeply([ sort split /\n/, $out ],
          [ '/etc/logrotate.d/sluice', '/etc/sluice/sluice.conf' ],
          'conffiles: the configuration and the logrotate snippet');
($rc, $out) = cmd($bin{'dpkg-deb'}, '-I', $deb, 'postinst');
like($out, qr/systemd-sysusers.*deb-systemd-invoke.*chown root:sluice/s,
     'postinst: the user, then the start, then the configuration\'s owner');

my $sluice = "$root/usr/sbin/sluice";
my ($version) = slurp("$top/configure") =~ /^SLC_VERSION=(\S+)$/m;
($rc, $out) = cmd($bin{'dpkg-deb'}, '-f', $deb, 'Version');
is($out, "$version\n", "the package's version is configure's ($version)");
($rc, $out, $err) = cmd($sluice, '-V');
like($out, qr/^sluice version \Q$version\E$/m, 'and so is the binary\'s')
    or diag($out, $err);
my ($help) = (cmd($sluice, '-h'))[1];
my ($default) = $help =~ /^\s+-c file .*\(default: (\S+)\)$/m;
is($default, '/etc/sluice/sluice.conf',
   'its default -c is the packaged configuration');

# --- the unit, the configuration and logrotate agree --------------------

my $unit = slurp("$root/lib/systemd/system/sluice.service");
my %u;
push @{ $u{$1} }, $2 while $unit =~ /^(\w+)=(.*)$/mg;
my $conf = slurp("$root/etc/sluice/sluice.conf");
my ($pid) = $conf =~ /^pid\s+(\S+);/m;
my ($log) = $conf =~ /^error_log\s+(\S+?)[\s;]/m;
my $rundir = dirname($pid // '');
my $logdir = dirname($log // '');
is($u{Type}[0], 'forking', 'the unit is Type=forking');
unlike($conf, qr/^\s*daemon\s+off/m, 'and the configuration daemonizes');
is($u{PIDFile}[0], $pid, "its PIDFile is the configuration's pid");
is($rundir, "/run/$u{RuntimeDirectory}[0]", 'in its RuntimeDirectory');
is($logdir, "/var/log/$u{LogsDirectory}[0]",
   'the error log in its LogsDirectory');
is($u{ExecStart}[0], "/usr/sbin/sluice -c $default",
   'ExecStart names the packaged configuration');
my $lr = slurp("$root/etc/logrotate.d/sluice");
like($lr, qr/^\Q$logdir\E\/\*\.log \{$/m, 'logrotate: that log directory');
like($lr, qr/^\s*su \Q$u{User}[0] $u{Group}[0]\E$/m,
     "as the unit's user and group");
like($lr, qr/kill -USR1 /, 'sends USR1');
like($lr, qr/\Q$pid\E/, 'to the pid in the PIDFile');

($rc, $out, $err) = cmd($sluice, '-t', '-c', "$root/etc/sluice/sluice.conf");
is($rc, 0, 'sluice -t accepts the packaged configuration as it is')
    or diag($out, $err);

# --- a start, a rotation, a stop: no privilege, paths moved -------------

# As the unit runs it: a user of its own (nobody here), no capability, no
# new privileges.  A test that is not root runs it as itself.
my @drop = ($bin{setpriv}, '--no-new-privs');
my ($uid, $gid) = ($>, $) + 0);
if ($> == 0) {
    ($uid, $gid) = (NOBODY, NOBODY);
    push @drop, "--reuid=$uid", "--regid=$gid", '--clear-groups',
        '--inh-caps=-all', '--bounding-set=-all';
}
my ($user, $group) = (scalar getpwuid($uid), scalar getgrgid($gid));
make_path("$scratch/run", "$scratch/log");
chown $uid, $gid, "$scratch/run", "$scratch/log";
chmod 0750, "$scratch/log";

my $port = $t->port(0);
(my $c = $conf) =~ s{\Q$rundir\E/}{$scratch/run/}g;
$c =~ s{\Q$logdir\E/}{$scratch/log/}g;
$c =~ s{^(\s*listen\s+)(?:\S+:)?\d+;}{${1}127.0.0.1:$port;}mg;
my $sconf = "$scratch/sluice.conf";
open(my $fh, '>', $sconf) or die "$sconf: $!\n";
print $fh $c;
close $fh or die "$sconf: $!\n";
my $pidfile = "$scratch/run/sluice.pid";

($rc, $out, $err) = cmd(@drop, $sluice, '-c', $sconf);
is($rc, 0, 'the first process exits 0') or diag($out, $err);
ok(IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5),
   'with the port already bound: what Type=forking waits for');
$master = wait_for(sub {
    my $p = slurp($pidfile) // '';
    $p =~ /^(\d+)\n\z/ && pid_alive($1) ? $1 : 0;
}, timeout => 10, what => 'the pid file naming a live master');
ok($master, 'the master writes the pid file');
my ($muid) = (slurp("/proc/$master/status") // '') =~ /^Uid:\s+(\d+)/m;
is($muid, $uid, "and runs as $user");

(my $l = $lr) =~ s{\Q$logdir\E/}{$scratch/log/}g;
$l =~ s{\Q$pid\E}{$pidfile}g;
$l =~ s{^(\s*su) .*$}{$1 $user $group}m;
$t->write_file('logrotate.conf', $l);
my @state = ('-s', "$dir/logrotate.state", "$dir/logrotate.conf");
($rc, $out, $err) = cmd($bin{logrotate}, '-d', @state);
is($rc, 0, 'logrotate -d accepts the snippet') or diag($out, $err);
($rc, $out, $err) = cmd($bin{logrotate}, '-f', @state);
is($rc, 0, 'logrotate -f rotates') or diag($out, $err);
like(slurp("$scratch/log/error.log.1") // '',
     qr/signal USR1 received, reopening logs/,
     'the postrotate script sends USR1 to the master');
ok(wait_for(sub { -e "$scratch/log/error.log" }, timeout => 10,
            what => 'a new error.log'), 'sluice opens a new error.log');

($rc, $out, $err) = cmd(@drop, $sluice, '-s', 'quit', '-c', $sconf);
is($rc, 0, 'sluice -s quit') or diag($out, $err);
ok(wait_for(sub { !pid_alive($master) }, timeout => 15,
            what => 'the master to exit'), 'the master exits');
ok(!-e $pidfile, 'and removes its pid file');
like(slurp("$scratch/log/error.log") // '', qr/\] \d+: exit$/m,
     'logging its exit in the new file');
my @bad = grep { /\[(?:alert|crit|emerg)\]/ }
          map { split /\n/, slurp($_) // '' }
          glob("$scratch/log/error.log*");
is_deeply(\@bad, [], 'no alert, crit or emerg in the log');

# --- systemd-analyze, the man pages --------------------------------------

# the binary and the man pages it names, from the scratch root
(my $v = $unit) =~ s{/usr/sbin/sluice\b}{$sluice}g;
$t->write_file('unit/sluice.service', $v);
($rc, $out, $err) = cmd($bin{'systemd-analyze'}, 'verify',
    "$dir/unit/sluice.service",
    { env => { MANPATH => "$root/usr/share/man" }, timeout => 60 });
is($rc, 0, 'systemd-analyze verify: the unit') or diag($out, $err);
is("$out$err", '', 'without a message');

for my $m (qw(man8/sluice.8.gz man5/sluice.conf.5.gz)) {
    ($rc, $out, $err) = cmd('/bin/sh', '-c',
        "$bin{gzip} -dc \"\$1\" | $bin{groff} -man -ww -z -Tutf8", 'sh',
        "$root/usr/share/man/$m");
    is("$rc $err", '0 ', "groff -ww: $m without a warning");
}

my $man8 = slurp("$top/docs/sluice.8");
for my $o ($help =~ /^\s+-(\w)\b/mg) {
    like($man8, qr/^\.BI? \\-\Q$o\E\b/m, "sluice(8) has -$o");
}
my ($sigs) = $help =~ /send to the master: (.*)$/m;
my @missing = grep { $man8 !~ /^\.B \Q$_\E$/m } split /,\s*/, $sigs // '';
is_deeply(\@missing, [], "sluice(8) names every -s signal ($sigs)");

my %doc = map { $_ => 1 } slurp("$top/docs/directives.md") =~ /^### (\w+)/mg;
my ($section) = slurp("$top/docs/sluice.conf.5")
                =~ /^\.SH DIRECTIVES\n(.*?)^\.SH /ms;
my %man = map { $_ => 1 } ($section // '') =~ /^\.BR? (\w+)/mg;
is_deeply([ grep { !$man{$_} } sort keys %doc ], [],
          'sluice.conf(5) names every directive of docs/directives.md');
is_deeply([ grep { !$doc{$_} } sort keys %man ], [],
          'and none that is not there');

$t->done_testing;
