#!/usr/bin/perl

# The floors of the source tree (docs/STYLE: "lower floors never call
# upper ones"): the core and the event loop know no protocol.  Nothing in
# src/core or src/event includes a mysql header or names a mysql or
# session symbol: the mysql module finds its configuration through its
# module context (slc_mysql_conf()), not through the cycle.  The .c files
# do not even say "mysql" (the headers still name the mysql {} context,
# SLC_CONF_MYSQL).  Routers are a mysql-layer concept too: the core names
# no router type or symbol (a module's `router` table is opaque to it).
# Reads the sources only: needs no MariaDB.
#
# src/mysql by floor (docs/architecture.md, "Source layout"): proto/ (the
# wire: codec, handshake, auth, GTIDs, tracker, scanner) and sql/ (the
# classifier) are pure and include only themselves, what lies under them
# (sql/ reads proto/'s constants) and the core; upstream/ (servers,
# monitor, accounts, catalog) includes nothing of session/ or cmd/;
# session/ nothing of cmd/ but the router's table.

use strict;
use warnings;

use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";
my @files = sort glob("$root/src/core/*.[ch] $root/src/event/*.[ch]");
ok(@files > 10, 'found the core and event sources');

my $protocol = qr/\#include\s+"slc_mysql | \bslc_mysql_\w+
                | \bslc_sessions?_\w+ | \bslc_backend_\w+
                | \bslc_router_\w+/x;

for my $f (@files) {
    (my $name = $f) =~ s{.*/}{};
    open(my $fh, '<', $f) or die "$f: $!";
    my @bad;
    while (my $line = <$fh>) {
        next if $line =~ m{^\s*(/?\*|//)};          # comments
        next unless $line =~ $protocol
                    || ($name =~ /\.c\z/ && $line =~ /mysql/i);
        push @bad, "$.: $line";
    }
    close($fh);
    is(join('', @bad), '', "$name knows no protocol");
}

# --- src/mysql's floors ----------------------------------------------------

# header name => its folder under src/mysql ('' at top); a .c too, for
# one compiled into another of its floor (the classifier's tokenizer)
my %floor;
for my $h (glob("$root/src/mysql/*.[ch] $root/src/mysql/*/*.[ch]")) {
    my ($dir, $name) = $h =~ m{src/mysql/(?:(\w+)/)?([^/]+)\z};
    $floor{$name} = $dir // '';
}
my %core = map { (my $n = $_) =~ s{.*/}{}; ($n => 1) }
           glob("$root/src/core/*.h $root/src/event/*.h");
ok(keys %floor > 20, 'found the mysql headers');

# what each floor may include besides the core and itself
my %may = (
    proto    => {},
    sql      => { proto => 1 },
    upstream => { '' => 1, proto => 1, sql => 1 },
    session  => { '' => 1, proto => 1, sql => 1, upstream => 1 },
);
# single headers a floor may read above it: the session calls its router
# through the router's table (slc_mysql_router.h), never the cmd floor's
# functions (it reaches them through its forward hooks, which
# slc_mysql_module.c installs)
my %may_header = (
    session => { 'slc_mysql_router.h' => 1 },
);
for my $dir (sort keys %may) {
    my @srcs = sort glob("$root/src/mysql/$dir/*.[ch]");
    ok(@srcs > 2, "src/mysql/$dir has its files");
    for my $f (@srcs) {
        (my $name = $f) =~ s{.*/}{};
        open(my $fh, '<', $f) or die "$f: $!";
        my @bad;
        while (my $line = <$fh>) {
            next unless $line =~ /^\s*#\s*include\s+"([^"]+)"/;
            my $inc = $1;
            next if $core{$inc} || $inc =~ /\.inc\z|^slc_auto_config\.h\z/;
            my $to = $floor{$inc};
            push @bad, "$.: $inc (" . ($to // 'unknown') . ")\n"
                unless defined $to && ($to eq $dir || $may{$dir}{$to}
                                       || $may_header{$dir}{$inc});
        }
        close($fh);
        is(join('', @bad), '', "$dir/$name includes no upper floor");
    }
}

done_testing();
