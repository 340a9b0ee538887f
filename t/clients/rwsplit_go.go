// The Go client of t/rwsplit_go.t: database/sql with go-sql-driver/mysql,
// built without modules against Debian's copy (GO111MODULE=off,
// GOPATH=/usr/share/gocode).
//
//	rwsplit_go PORT TABLE ID REPLICA_SERVER_ID
//
// interpolateParams=false: a query with arguments is a COM_STMT_PREPARE
// and COM_STMT_EXECUTE.  Each step prints one line "STEP VALUE" or
// "STEP ERR message"; the timeouts turn a hang into an error.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

var db *sql.DB

func step(name string, f func() (string, error)) {
	v, err := f()
	if err != nil {
		v = "ERR " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	fmt.Printf("%s %s\n", name, v)
}

// the first row of a query, its columns joined by spaces
func row(q func() (*sql.Rows, error)) (string, error) {
	rows, err := q()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]interface{}, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("no row")
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", err
	}
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return strings.Join(s, " "), rows.Err()
}

func prepared(stmt *sql.Stmt, args ...interface{}) (string, error) {
	return row(func() (*sql.Rows, error) { return stmt.Query(args...) })
}

func query(q string, args ...interface{}) (string, error) {
	return row(func() (*sql.Rows, error) { return db.Query(q, args...) })
}

// a query cancelled after 300 ms: the driver closes its connection
func cancelled(q string, args ...interface{}) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(),
		300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := row(func() (*sql.Rows, error) {
		return db.QueryContext(ctx, q, args...)
	})
	if err == nil {
		return "", fmt.Errorf("not cancelled")
	}
	if time.Since(start) > 2*time.Second {
		return "", fmt.Errorf("cancelled late: %v", err)
	}
	return "cancelled", nil
}

func main() {
	port, table, id, rid := os.Args[1], os.Args[2], os.Args[3],
		os.Args[4]
	var err error
	db, err = sql.Open("mysql", "app:secret@tcp(127.0.0.1:"+port+
		")/test?interpolateParams=false&timeout=5s&readTimeout=8s"+
		"&writeTimeout=8s")
	if err != nil {
		fmt.Println("open ERR", err)
		os.Exit(1)
	}
	// one connection: every step runs on the same session, unless the
	// driver dropped it
	db.SetMaxOpenConns(1)

	// a statement prepared once runs on the replica once it is prepared
	// there too: executed until it does (the proxy prepares it there
	// meanwhile), with a deadline
	sel, err := db.Prepare("SELECT @@server_id, ?")
	if err != nil {
		fmt.Println("prepare ERR", err)
		os.Exit(1)
	}
	step("select", func() (string, error) {
		deadline := time.Now().Add(3 * time.Second)
		for n := 0; ; n++ {
			v, err := prepared(sel, 7)
			if err != nil || strings.HasPrefix(v, rid+" ") ||
				time.Now().After(deadline) {
				return fmt.Sprintf("%s (%d on the primary first)", v, n),
					err
			}
		}
	})
	// database/sql's Query with arguments: PREPARE, EXECUTE, CLOSE
	step("oneshot", func() (string, error) {
		n := 0
		for i := 0; i < 20; i++ {
			v, err := query("SELECT @@server_id, ?", i)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(v, rid+" ") {
				n++
			}
		}
		return fmt.Sprint(n), nil
	})
	step("transaction", func() (string, error) {
		tx, err := db.Begin()
		if err != nil {
			return "", err
		}
		v, err := row(func() (*sql.Rows, error) {
			return tx.Query("SELECT @@server_id, ?", 1)
		})
		if err != nil {
			tx.Rollback()
			return "", err
		}
		return v, tx.Commit()
	})
	step("after_commit", func() (string, error) {
		return prepared(sel, 2)
	})
	step("cancel_query", func() (string, error) {
		return cancelled("SELECT SLEEP(3)")
	})
	// without arguments, a query is a COM_QUERY: its session's first
	// read, on the replica
	step("after_cancel_query", func() (string, error) {
		return query("SELECT @@server_id, 3")
	})
	step("cancel_prepared", func() (string, error) {
		return cancelled("SELECT SLEEP(?)", 3)
	})
	step("after_cancel_prepared", func() (string, error) {
		return query("SELECT @@server_id, 4")
	})
	step("insert", func() (string, error) {
		stmt, err := db.Prepare("INSERT INTO " + table + " VALUES (?)")
		if err != nil {
			return "", err
		}
		defer stmt.Close()
		res, err := stmt.Exec(id)
		if err != nil {
			return "", err
		}
		n, err := res.RowsAffected()
		return fmt.Sprint(n), err
	})
	step("read_back", func() (string, error) {
		return query("SELECT COUNT(*), @@server_id FROM "+table+
			" WHERE id = ?", id)
	})
	sel.Close()
	db.Close()
}
