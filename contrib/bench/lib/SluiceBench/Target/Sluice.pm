package SluiceBench::Target::Sluice;

# sluice in front of the primary: one `server {}` listening on a loopback
# TCP port and a unix socket, readconn to the primary unless the registry
# entry gives other `server_conf`.  Options: workers => N | 'auto',
# module => NAME (needed in objs/sluice), server_conf => TEXT, label,
# sched => POLICY (a worker_sched_policy line; default: none, i.e. batch),
# replica => 1 (the upstream lists the sandbox's replica as well),
# With --scrape HZ, a status_listen, and a scraper (contrib/bench/scrape)
# GETs its /metrics HZ times a second from start to stop.
# upstream_conf => TEXT (more lines in the upstream: the cache's monitor).
#
# The processes are known by pid: the master is the child we spawned (and
# must be what the pid file says), the workers are its children.  Logs at
# notice: no line per session.

use strict;
use warnings;

use parent -norequire, 'SluiceBench::Target';

use POSIX ();

use Sluice::Sandbox qw(spawn pid_alive wait_exit proc_starttime
                       slurp tail_file);
use SluiceBench::Proc qw(children_of);
use SluiceBench::Util qw(run_capture guard unguard);

use constant {
    FD_RESERVE => 64,     # listeners, epoll, log, pipes, per worker
    IMBALANCE  => 1.15,   # SO_REUSEPORT spreads sessions unevenly
};

sub nworkers {
    my ($self) = @_;
    my $w = $self->{workers} // 1;
    return $w eq 'auto' ? $self->{ctx}{nproc} : $w;
}

sub label {
    my ($self) = @_;
    return $self->{label} if $self->{label};
    my $w = $self->{workers} // 1;
    my $sched = $self->{sched} ? ", worker_sched_policy $self->{sched}"
        : '';
    return ($w eq 'auto'
        ? 'sluice readconn, auto (' . $self->nworkers . ' workers)'
        : "sluice readconn, $w worker" . ($w == 1 ? '' : 's')) . $sched;
}

sub unavailable {
    my ($self) = @_;
    my $m = $self->{module} // 'readconn';
    return grep({ $_ eq $m } @{ $self->{ctx}{sluice_modules} }) ? undef
        : "objs/sluice has no $m module";
}

# A worker holds two descriptors per session (client and backend).
sub idle_capacity {
    my ($self) = @_;
    my $per = int(($self->{ctx}{nofile} - FD_RESERVE) / 2);
    my $w = $self->nworkers;
    return $w == 1 ? $per : int($per * $w / IMBALANCE);
}

sub _conf {
    my ($self, %o) = @_;
    my $c = $self->{ctx};
    my $d = $self->{dir};
    my $wc = ($o{sessions} // 0) + 1024;
    my $server = $self->{server_conf}
        // "router readconn;\n        readconn_role primary;";
    my $rlimit = $c->{sluice_rlimit_ok}
        ? "worker_rlimit_nofile $c->{nofile};\n" : '';
    $rlimit .= "worker_sched_policy $self->{sched};\n" if $self->{sched};
    my $replica = $self->{replica}
        ? "server 127.0.0.1:$c->{replica}{port} role=replica;" : '';
    my $mysql = $self->{mysql_conf} // '';
    $mysql =~ s/%%REDIS%%/$c->{redis}{port}/g if $c->{redis};
    $mysql =~ s/%%REDISCL%%/$c->{redis_cluster}{port}/g
        if $c->{redis_cluster};
    my $up = $self->{upstream_conf} // '';
    my $status = $c->{scrape}
        ? "status_listen 127.0.0.1:$self->{status_port};\n" : '';
    return <<CONF;
# written by contrib/bench for target $self->{name}
daemon off;
master_process on;
worker_processes $self->{workers};
${rlimit}${status}pid $d/sluice.pid;
error_log $d/error.log notice;
events { worker_connections $wc; }
mysql {
    user $c->{user} { password "$c->{password}"; }
    $mysql
    upstream bench {
        server 127.0.0.1:$c->{primary}{port} role=primary;
        $replica
        $up
    }
    server {
        listen 127.0.0.1:$self->{port};
        listen unix:$self->{unix};
        $server
        upstream bench;
    }
}
CONF
}

# start(sessions => N): sessions is how many clients it must accept at once
# (worker_connections is set above it).
sub start {
    my ($self, %o) = @_;
    my $c = $self->{ctx};
    my $d = $self->prepare_dir('sluice.sock');
    my $conf = "$d/sluice.conf";
    $self->{status_port} //= Sluice::Sandbox::free_port() if $c->{scrape};
    open(my $fh, '>', $conf) or die "$conf: $!\n";
    print $fh $self->_conf(%o);
    close $fh or die "$conf: $!\n";
    my ($rc, $out) = run_capture(
        cmd => [ $c->{sluice_bin}, '-t', '-p', "$d/", '-c', $conf ],
        timeout => 30);
    die "sluice -t rejects $conf ($rc):\n$out" if $rc != 0;

    $self->{log_offset} = -s "$d/error.log" // 0;
    my $pid = $self->{pid} = spawn(
        cmd => [ $c->{sluice_bin}, '-p', "$d/", '-c', $conf ],
        log => "$d/stderr.log");
    $self->{pid_start} = proc_starttime($pid) // 0;
    guard("pid $pid $self->{pid_start}");
    my $why = sub {
        "--- $d/stderr.log:\n" . tail_file("$d/stderr.log", 10)
        . "--- $d/error.log:\n" . tail_file("$d/error.log", 10);
    };
    $self->wait_ready(alive => sub { pid_alive($pid) }, why => $why);
    my ($pf) = (slurp("$d/sluice.pid") // '') =~ /(\d+)/;
    die "$d/sluice.pid says " . ($pf // 'nothing') . ", we started $pid\n"
        unless ($pf // 0) == $pid;
    # the workers run once they answer; all of them (and the monitor, a
    # child too, when the upstream has one, and the Redis tier's
    # subscriber, or the binlog reader that replaces it)?
    my $want = $self->nworkers + ($c->{scrape} ? 1 : 0)
        + (($self->{upstream_conf} // '') =~ /monitor_user/ ? 1 : 0)
        + ($self->{redis} ? 1 : 0);
    my $n = 0;
    Sluice::Sandbox::poll_until(10, sub {
        $n = () = children_of($pid);
        $n == $want;
    }) or die "$self->{name}: $n of $want workers\n" . $why->();
    # a cache stores nothing until the schema catalog is loaded
    if ($self->{cache}) {
        Sluice::Sandbox::poll_until(10, sub {
            (slurp("$d/error.log") // '') =~ /schema catalog loaded/;
        }) or die "$self->{name}: no schema catalog\n" . $why->();
    }
    $self->_scrape_start if $c->{scrape};
    return $self;
}

# The scraper: GET /metrics at --scrape HZ until stop.
sub _scrape_start {
    my ($self) = @_;
    my $pid = $self->{scraper} = spawn(
        cmd => [ $^X, "$self->{ctx}{top}/contrib/bench/scrape",
                 "127.0.0.1:$self->{status_port}", $self->{ctx}{scrape} ],
        log => "$self->{dir}/scrape.log");
    guard("pid $pid " . (proc_starttime($pid) // 0));
}

sub _scrape_stop {
    my ($self) = @_;
    my $pid = delete $self->{scraper} or return;
    kill 'TERM', $pid;
    wait_exit($pid, 5) or kill 'KILL', $pid;
    unguard("pid $pid");
    my ($n, $bad) = (slurp("$self->{dir}/scrape.log") // '')
        =~ /scrapes (\d+) failed (\d+)/;
    push @{ $self->{problems} }, "scraper: $bad of $n scrapes failed"
        if $bad;
}

sub cpu_pids {
    my ($self) = @_;
    my $pid = $self->{pid} or return ();
    return ([ $pid, $self->{pid_start} ], children_of($pid));
}

sub rss_pids {
    my ($self) = @_;
    return map { $_->[0] } children_of($self->{pid} // return ());
}

# TERM (fast shutdown: nothing of the bench is left to finish), then KILL
# after a deadline; then what error.log said meanwhile goes to problems.
# The cache's counters, from `sluice -s stats` (SIGUSR2) in the error log:
# hit ratio and the zone's bytes, as a note of the run.
sub _cache_note {
    my ($self, $pid) = @_;
    my $log = "$self->{dir}/error.log";
    my $off = -s $log // 0;
    kill 'USR2', $pid or return;
    my $line;
    Sluice::Sandbox::poll_until(5, sub {
        my $text = slurp($log) // '';
        ($line) = substr($text, $off) =~ /(cache zone "\w+": lookups=.*)/;
        $line;
    }) or return;
    my %st = $line =~ /(\w+)=(\d+)/g;
    my $ratio = $st{lookups} ? 100 * $st{hits} / $st{lookups} : 0;
    push @{ $self->{ctx}{notes} }, sprintf '%s: %d lookups, %d hits '
        . '(%.2f %%), %d stores, %d entries holding %d bytes of a zone of '
        . '%d', $self->{name}, $st{lookups}, $st{hits}, $ratio, $st{stores},
        $st{entries}, $st{bytes}, $st{size};
}

sub stop {
    my ($self) = @_;
    my $pid = $self->{pid} or return $self;
    $self->_scrape_stop;
    $self->_cache_note($pid) if $self->{cache} && pid_alive($pid);
    delete $self->{pid};
    my @workers = map { $_->[0] } children_of($pid);
    if (pid_alive($pid)) {
        kill 'TERM', $pid;
        if (!wait_exit($pid, 10)) {
            push @{ $self->{problems} }, 'sluice did not exit on SIGTERM '
                . 'within 10 s';
            kill 'KILL', -$pid;
            wait_exit($pid, 5);
        }
    }
    my $st = Sluice::Sandbox::exit_status($pid);
    push @{ $self->{problems} }, "sluice master exited on signal "
        . ($st & 127) if defined $st && ($st & 127)
        && ($st & 127) != POSIX::SIGTERM();
    kill 'KILL', -$pid;             # anything left in its group
    wait_exit($_, 5) for @workers;
    unguard("pid $pid");
    push @{ $self->{problems} }, map { "error.log: $_" }
        SluiceBench::Target::log_lines_since("$self->{dir}/error.log",
            $self->{log_offset},
            qr/\[(?:alert|crit|emerg)\]|exited on signal|Sanitizer/);
    return $self;
}

sub version { $_[0]{ctx}{versions}{sluice} }

1;
