package Sluice::Redis;

# A redis-server of a test's own, for the tests that kill, freeze or
# restart it (the harness's shared one is never harmed):
#
#   my $r = Sluice::Redis->start(dir => $t->testdir);
#   $r->port; $r->cli('GET', 'k');
#   $r->freeze; $r->thaw;           # SIGSTOP, SIGCONT
#   $r->kill;                       # SIGKILL, reaped
#   $r->restart;                    # on the same port, empty
#   my @nodes = Sluice::Redis->cluster(dir => $t->testdir, nodes => 3);
#
# No persistence (save "", appendonly no): a restart is empty.  Gone
# when the object is.

use strict;
use warnings;

use Carp qw(croak);
use POSIX qw(WNOHANG);
use Sluice::Sandbox qw(free_port find_bin poll_until);

sub start {
    my ($class, %o) = @_;
    my $self = bless {
        dir  => $o{dir} // croak('dir'),
        port => $o{port} // free_port(),
        args => $o{args} // [],
    }, $class;
    $self->_spawn;
    return $self;
}

# Sluice::Redis->cluster(dir => D, nodes => 3): a Redis Cluster of the
# test's own: the nodes started with cluster-enabled, joined by
# `redis-cli --cluster create` (masters only), and ready (every node says
# cluster_state:ok).  Returns the nodes' Sluice::Redis objects.
my $CLUSTER_SEQ = 0;
sub cluster {
    my ($class, %o) = @_;
    my $n = $o{nodes} // 3;
    my @nodes = map {
        my $conf = "nodes-$$-" . ++$CLUSTER_SEQ . '.conf';
        # the bus on a free port of its own (by default port + 10000,
        # which a port above 55535 cannot have, and may be taken)
        $class->start(dir => $o{dir},
                      args => [ '--cluster-enabled', 'yes',
                                '--cluster-config-file', $conf,
                                '--cluster-port', free_port(),
                                '--cluster-node-timeout', '2000' ]);
    } 1 .. $n;
    my $cli = find_bin('redis-cli');
    my $out = qx{$cli --cluster create @{[ map { '127.0.0.1:' . $_->port }
        @nodes ]} --cluster-replicas 0 --cluster-yes 2>&1};
    croak("redis-cli --cluster create failed:\n$out") if $?;
    poll_until(20, sub {
        !grep { ($_->cli('CLUSTER', 'INFO') // '') !~ /cluster_state:ok/ }
            @nodes
    }) or croak('the cluster did not become ready');
    return @nodes;
}

# Sluice::Redis->need($t, MODULES...): the test needs those modules built
# in ($t->has) and a redis-server to start (else it fails: contrib/deps.sh
# installs one).
sub need {
    my ($class, $t, @modules) = @_;
    $t->has(@modules) if @modules;
    $t->need((eval { find_bin('redis-server') } ? 1 : 0),
             'redis-server is not in PATH (contrib/deps.sh installs it)');
}

sub port { $_[0]{port} }
sub pid  { $_[0]{pid} }

sub _spawn {
    my ($self) = @_;
    my $bin = find_bin('redis-server');
    my $log = "$self->{dir}/redis-$self->{port}.log";
    my $pid = fork // croak("fork: $!");
    if ($pid == 0) {
        open(STDOUT, '>>', $log);
        open(STDERR, '>&', \*STDOUT);
        { exec($bin, '--port', $self->{port}, '--bind', '127.0.0.1',
               '--save', '', '--appendonly', 'no', '--dir', $self->{dir},
               @{ $self->{args} }) }
        POSIX::_exit(127);
    }
    $self->{pid} = $pid;
    poll_until(10, sub { ($self->cli('PING') // '') =~ /PONG/ })
        or croak("redis-server on port $self->{port} did not start "
                 . "(see $log)");
}

# redis-cli ARGS...: its output (each argument passed as is).
sub cli {
    my ($self, @args) = @_;
    my $cli = find_bin('redis-cli');
    # (its complaints while the server is down are not the test's)
    open(my $err, '>&', \*STDERR) or return undef;
    open(STDERR, '>', '/dev/null');
    my $ok = open(my $fh, '-|', $cli, '-h', '127.0.0.1', '-p', $self->{port},
                  @args);
    open(STDERR, '>&', $err);
    return undef unless $ok;
    local $/;
    my $out = <$fh>;
    close $fh;
    return $out;
}

sub freeze { kill 'STOP', $_[0]{pid} }
sub thaw   { kill 'CONT', $_[0]{pid} }

sub kill {
    my ($self) = @_;
    return unless $self->{pid};
    CORE::kill('KILL', $self->{pid});
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub restart {
    my ($self) = @_;
    $self->kill;
    $self->_spawn;
}

sub DESTROY {
    my ($self) = @_;
    local ($?, $!, $@);
    $self->kill if $self->{pid};
}

1;
