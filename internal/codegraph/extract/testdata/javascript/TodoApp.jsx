import React, { useState, useEffect, useCallback, memo } from 'react';
import PropTypes from 'prop-types';
import { connect } from 'react-redux';
import * as api from './api';
import Layout from './Layout';
import styles from './TodoApp.module.css';

// Function components; hooks' callbacks are not definitions.
function TodoItem({ todo, onToggle }) {
  const label = todo.done ? <s>{todo.title}</s> : todo.title;
  return (
    <li className={styles.item} onClick={() => onToggle(todo.id)}>
      <Checkbox checked={todo.done} />
      {label}
    </li>
  );
}

TodoItem.propTypes = {
  todo: PropTypes.object.isRequired,
  onToggle: PropTypes.func,
};

const Checkbox = ({ checked }) => <input type="checkbox" readOnly checked={checked} />;

// Wrapped components: the function is a callback of memo, not a definition.
const MemoItem = memo(function MemoItem(props) {
  return <TodoItem {...props} />;
});

export function TodoList({ todos, onToggle }) {
  const [filter, setFilter] = useState('all');

  const visible = useCallback(() => todos.filter((t) => filter === 'all' || t.done), [todos, filter]);

  const handleFilter = (event) => {
    setFilter(event.target.value);
  };

  useEffect(() => {
    document.title = `${visible().length} todos`;
  }, [visible]);

  return (
    <Layout.Section title="Todos">
      <FilterSelect value={filter} onChange={handleFilter} />
      <ul>
        {visible().map((todo) => (
          <MemoItem key={todo.id} todo={todo} onToggle={onToggle} />
        ))}
      </ul>
    </Layout.Section>
  );
}

function FilterSelect({ value, onChange }) {
  return (
    <select value={value} onChange={onChange}>
      <option value="all">All</option>
      <option value="done">Done</option>
    </select>
  );
}

class TodoApp extends React.Component {
  static defaultProps = { pollInterval: 5000 };

  state = { todos: [], error: null };

  handleToggle = async (id) => {
    const todo = await api.toggle(id);
    this.setState(({ todos }) => ({ todos: todos.map((t) => (t.id === id ? todo : t)) }));
  };

  componentDidMount() {
    this.load();
    this.timer = setInterval(() => this.load(), this.props.pollInterval);
  }

  componentWillUnmount() {
    clearInterval(this.timer);
  }

  async load() {
    try {
      this.setState({ todos: await api.fetchTodos() });
    } catch (error) {
      this.setState({ error });
    }
  }

  render() {
    const { todos, error } = this.state;
    if (error) return <ErrorBanner error={error} />;
    return <TodoList todos={todos} onToggle={this.handleToggle} />;
  }
}

const ErrorBanner = ({ error }) => <div role="alert">{error.message}</div>;

const mapState = (state) => ({ user: state.user });

export default connect(mapState)(TodoApp);
