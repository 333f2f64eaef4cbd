package com.acme.sched;

import java.util.*;
import java.util.concurrent.Executor;

/** Nested, inner, local and anonymous classes; lambdas and method references. */
public class Scheduler {
    private final Executor executor;

    private final Comparator<Task> byPriority = new Comparator<Task>() {
        @Override
        public int compare(Task a, Task b) {
            return Integer.compare(a.priority(), b.priority());
        }
    };

    private final Runnable idle = () -> Log.debug("idle");

    public Scheduler(Executor executor) {
        this.executor = Objects.requireNonNull(executor);
    }

    public static class Task implements Runnable, Comparable<Task> {
        private final int priority;

        Task(int priority) {
            this.priority = priority;
        }

        int priority() {
            return priority;
        }

        public void run() {
            Log.info("task " + priority);
        }

        public int compareTo(Task o) {
            return priority - o.priority;
        }

        static class Builder {
            private int priority;

            Builder priority(int p) {
                this.priority = p;
                return this;
            }

            Task build() {
                return new Task(priority);
            }
        }
    }

    class Worker extends Thread {
        @Override
        public void run() {
            Scheduler.this.drain();
            executor.execute(idle);
        }
    }

    void submit(Task task) {
        executor.execute(new Runnable() {
            public void run() {
                task.run();
                new Thread(new Runnable() {
                    @Override
                    public void run() {
                        done(task);
                    }
                }).start();
            }
        });
        executor.execute(() -> {
            Runnable r = new Runnable() {
                public void run() {
                    Log.info("lambda");
                }
            };
            r.run();
        });
    }

    List<Task> drain() {
        class Drainer implements Iterator<Task> {
            private final Deque<Task> queue = new ArrayDeque<>();

            public boolean hasNext() {
                return !queue.isEmpty();
            }

            public Task next() {
                return queue.poll();
            }
        }
        record Snapshot(int count) {}
        Drainer d = new Drainer();
        List<Task> out = new ArrayList<>();
        d.forEachRemaining(out::add);
        out.sort(Comparator.comparingInt(Task::priority).thenComparing(byPriority));
        Collections.<Task>emptyList().forEach(this::done);
        out.stream().map(Task.Builder::new).forEach(System.out::println);
        ((Runnable) idle).run();
        "x".length();
        Scheduler.class.getName();
        new Worker().start();
        this.new Worker().start();
        new Snapshot(out.size());
        return out;
    }

    void done(Task t) {
        Log.info(String.valueOf(t.priority()));
    }

    static Scheduler direct() {
        return new Scheduler(Runnable::run);
    }
}
