// Thread-safety annotation macros after the parameters, as gtest/gmock and
// abseil write them: tree-sitter reads the macro as the declarator.
class Expectation {
 public:
  bool IsSatisfied() const
      GTEST_EXCLUSIVE_LOCK_REQUIRED_(g_gmock_mutex) {
    g_gmock_mutex.AssertHeld();
    return cardinality().IsSatisfiedByCallCount(call_count_);
  }
  void Retire() GTEST_LOCK_EXCLUDED_(mu) { retired_ = true; }
};

void Mock::AllowLeak(const void* mock_obj)
    GTEST_LOCK_EXCLUDED_(internal::g_gmock_mutex) {
  internal::MutexLock l(&internal::g_gmock_mutex);
  Registry().AllowLeak(mock_obj);
}

void Mock::Register() GTEST_EXCLUSIVE_LOCK_REQUIRED_(mu) {
  Register(nullptr);
}

// A macro-looking statement inside a body is no definition.
void Fallible() {
  FMT_TRY {
    run();
  } FMT_CATCH(...) {
    recover();
  }
}

// The same with FMT_CATCH on its own line, in a class in a namespace: the
// class and the namespace go on after it.
namespace detail {
class Buffer {
 public:
  ~Buffer() {
    FMT_TRY { flush(); }
    FMT_CATCH(...) {}
  }
  void flush() { write(); }
};
void after() { drain(); }
}  // namespace detail
